"""Outputs (translator/fileio/outputs.py): a command replaces or removes only what translator wrote;
a folder of the user's is refused, and an output file that is also an input or another
output is refused."""

from __future__ import annotations

import json

import pytest
from corpora import config, corpus_folder
from util import tiny_config, user_error

from translator.config import config_from_dict
from translator.data import prepare as prep
from translator.data.corpora import prepare_corpora
from translator.fileio.outputs import (
    MARKER,
    claim_folder,
    distinct_outputs,
    mark,
    owned,
    replace_folder,
    temporary_folder,
)


def _gone_pid() -> int:
    """The id of a process that has ended."""
    import subprocess
    import sys

    child = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                           capture_output=True, text=True, check=True)  # fmt: skip
    return int(child.stdout)


def test_a_swap_killed_between_its_renames_gets_the_old_contents_back(tmp_path):
    """A command killed after moving the old folder aside and before putting the new one
    in place: the next build of the folder puts the old contents back, then replaces them."""
    target = tmp_path / "out"
    tmp = temporary_folder(target)
    (tmp / "model.bin").write_text("old")
    replace_folder(tmp, target, "export")
    pid = _gone_pid()
    target.rename(tmp_path / f".out.tmp-old-{pid}")  # as the killed swap left them
    half = tmp_path / f".out.tmp-{pid}"
    half.mkdir()
    (half / "model.bin").write_text("new, never put in place")
    mark(half, ["model.bin"], "export")
    tmp = temporary_folder(target)
    assert (target / "model.bin").read_text() == "old" and owned(target) == {"model.bin"}
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(["out", tmp.name])


def test_a_folder_another_live_process_is_building_is_refused(tmp_path):
    import subprocess
    import sys

    target = tmp_path / "out"
    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        theirs = tmp_path / f".out.tmp-{sleeper.pid}"
        theirs.mkdir()
        mark(theirs, (), scratch=True)
        message = user_error(temporary_folder, target)
        assert message.startswith(f"{target} is being written by another command"), message
        assert theirs.is_dir() and not target.exists()
    finally:
        sleeper.kill()
        sleeper.wait()
    temporary_folder(target)  # its builder gone: what it left is cleared
    assert not theirs.exists()


def test_a_users_folder_is_refused_and_an_empty_or_missing_one_is_claimed(tmp_path):
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "notes.txt").write_text("keep me")
    message = user_error(claim_folder, mine, "--out")
    assert "--out" in message and str(mine) in message and "notes.txt" in message
    assert not (mine / MARKER).exists()
    (tmp_path / "empty").mkdir()
    assert claim_folder(tmp_path / "empty", "--out") == set()
    assert claim_folder(tmp_path / "new" / "deep", "--out") == set()
    assert owned(tmp_path / "new" / "deep") == set()


def test_a_marker_another_process_is_writing_is_not_a_users_file(tmp_path):
    """Ranks of one torchrun run claim the run folder at once: the marker that one of them
    is writing (its temporary file, before the rename) does not make the folder the user's
    for the other."""
    folder = tmp_path / "run"
    folder.mkdir()
    (folder / f".{MARKER}.x1y2.tmp").write_text("{")  # as atomic_write_bytes names it
    assert claim_folder(folder, "run_dir") == set()
    other = tmp_path / "other"
    other.mkdir()
    (other / "notes.tmp").write_text("mine")
    assert "notes.tmp" in user_error(claim_folder, other, "run_dir")


def test_replacing_keeps_the_files_translator_did_not_write(tmp_path):
    target = tmp_path / "out"
    tmp = temporary_folder(target)
    (tmp / "a.bin").write_text("old a")
    (tmp / "b.bin").write_text("old b")
    replace_folder(tmp, target)
    assert owned(target) == {"a.bin", "b.bin"}
    (target / "readme.txt").write_text("the user's")  # put there after the command ran
    tmp = temporary_folder(target)
    (tmp / "a.bin").write_text("new a")
    replace_folder(tmp, target)
    assert (target / "readme.txt").read_text() == "the user's"
    assert (target / "a.bin").read_text() == "new a"
    assert not (target / "b.bin").exists()  # translator's, no longer written
    assert owned(target) == {"a.bin"}
    assert not list(tmp_path.glob(".out.tmp-*"))


def test_a_file_of_the_users_under_a_name_translator_writes_is_not_replaced(tmp_path):
    target = tmp_path / "out"
    claim_folder(target, "--out")
    (target / "a.bin").write_text("the user's")
    tmp = temporary_folder(target)
    (tmp / "a.bin").write_text("new")
    assert "a.bin" in user_error(replace_folder, tmp, target)
    assert (target / "a.bin").read_text() == "the user's"


def test_a_file_edited_since_translator_wrote_it_is_not_replaced(tmp_path):
    """A model card the user edited in an export is theirs: writing the export again is
    refused, the edit kept; an untouched one is replaced. Translator's own cache (prepared
    data, keep_edits off) is rebuilt whatever happened to it."""
    target = tmp_path / "out"
    for text in ("card 1", "card 2"):
        tmp = temporary_folder(target)
        (tmp / "README.md").write_text(text)
        (tmp / "w.bin").write_text("weights")
        replace_folder(tmp, target, keep_edits=True)
        assert (target / "README.md").read_text() == text
    with open(target / "README.md", "a") as card:
        card.write("\nthe user's words")
    tmp = temporary_folder(target)
    (tmp / "README.md").write_text("card 3")
    message = user_error(replace_folder, tmp, target, keep_edits=True)
    assert "README.md was changed since translator wrote it" in message
    assert (target / "README.md").read_text() == "card 2\nthe user's words"
    assert (target / "w.bin").read_text() == "weights"
    replace_folder(tmp, target)  # a cache: rebuilt
    assert (target / "README.md").read_text() == "card 3"


def test_a_copied_export_is_not_taken_for_an_edited_one(tmp_path):
    """A copy (cp -r, a checkout) moves every file's time, not its contents: writing over it
    is allowed; an edit of the same size is still found, by the contents."""
    import os
    import shutil

    target = tmp_path / "out"
    tmp = temporary_folder(target)
    (tmp / "README.md").write_text("card 1")
    replace_folder(tmp, target, keep_edits=True)
    copy = tmp_path / "copy"
    shutil.copytree(target, copy, copy_function=shutil.copyfile)  # times not kept
    (copy / "README.md").touch()
    tmp = temporary_folder(copy)
    (tmp / "README.md").write_text("card 2")
    replace_folder(tmp, copy, keep_edits=True)
    assert (copy / "README.md").read_text() == "card 2"
    (copy / "README.md").write_text("card X")  # the same size, another time
    os.utime(copy / "README.md", ns=(1, 1))
    tmp = temporary_folder(copy)
    (tmp / "README.md").write_text("card 3")
    assert "README.md was changed" in user_error(replace_folder, tmp, copy, keep_edits=True)


def test_an_output_that_is_an_input_or_another_output_is_refused(tmp_path):
    src = tmp_path / "in.de"
    src.write_text("x\n")
    message = user_error(
        distinct_outputs, {"--out-src": tmp_path / "o", "--out-tgt": tmp_path / "o"}
    )
    assert "--out-tgt" in message and "--out-src" in message
    link = tmp_path / "link.de"
    link.symlink_to(src)
    message = user_error(distinct_outputs, {"--output": link}, {"--src": src})
    assert "--output" in message and "--src" in message
    distinct_outputs({"--out-src": tmp_path / "a", "--out-tgt": tmp_path / "b"}, {"--src": src})


def test_eval_on_given_files_still_refuses_to_write_over_the_models_data(tmp_path):
    """eval --src/--ref --output: the model's training and test files are guarded as they
    are without --src/--ref; a model whose data is not on this machine guards nothing."""
    from translator.decode.evaluate import evaluate_translator

    folder = corpus_folder(tmp_path / "data")
    cfg = config(tmp_path, folder)
    files = (folder / "test.de", [folder / "test.en"])
    for guarded in ("train.en", "test.de"):
        message = user_error(evaluate_translator, None, cfg.data, 1, cfg.decode, "test", files,
                             False, outputs={"--output": folder / guarded})  # fmt: skip
        assert f"--output {folder / guarded} is also the input of the model's data" in message
    elsewhere = config(tmp_path, tmp_path / "gone").data
    with pytest.raises(AttributeError):  # past the guard: decoding with no translator
        evaluate_translator(None, elsewhere, 1, cfg.decode, "test", files, False,
                            outputs={"--output": folder / "train.en"})  # fmt: skip


def test_no_output_file_replaces_a_file_of_a_folder_translator_wrote(tmp_path):
    """A file of an export written without the list of its files (its manifest lists
    them), of a run folder, or the list itself: `kept` names each, so translate, score,
    eval and filter refuse to write over it; a file of the user's beside them is free."""
    from translator.fileio.outputs import kept

    export = tmp_path / "ct2"
    export.mkdir()
    for name in ("model.bin", "config.json", "notes.txt"):
        (export / name).write_text("x")
    manifest = {"format": "translator-ctranslate2", "files": ["model.bin", "config.json"]}
    (export / "manifest.json").write_text(json.dumps(manifest))
    for name in ("model.bin", "config.json", "manifest.json"):
        assert kept(export / name) == f"a file of the folder translator wrote in {export}"
    assert kept(export / "notes.txt") is None
    (tmp_path / "mine.txt").write_text("x")  # (a folder of no kind translator writes)
    assert kept(tmp_path / "mine.txt") is None
    run = tmp_path / "run"
    run.mkdir()
    for name in ("best.pt", "config.yaml", "mine.txt"):
        (run / name).write_text("x")
    assert kept(run / "config.yaml") is not None and kept(run / "mine.txt") is None
    marked = tmp_path / "marked"
    marked.mkdir()
    mark(marked, ["a.txt"])
    assert kept(marked / MARKER) == f"the list of the files translator wrote in {marked}"


# ---------------------------------------------------------------- prepare


def test_prepare_refuses_a_prepared_dir_that_holds_the_users_files(tmp_path):
    folder = tmp_path / "my data"
    folder.mkdir()
    (folder / "thesis.tex").write_text("years of work")
    cfg = config(tmp_path, corpus_folder(tmp_path / "d"), prepared_dir=str(folder))
    message = user_error(prep.prepare, cfg)
    assert "data.prepared_dir" in message and str(folder) in message
    assert (folder / "thesis.tex").read_text() == "years of work"
    assert sorted(p.name for p in folder.iterdir()) == ["thesis.tex"]


def test_prepare_rebuilds_its_folder_and_keeps_a_file_put_beside_it(tmp_path):
    cfg = config(tmp_path, corpus_folder(tmp_path / "d"), prepared_dir=str(tmp_path / "p"))
    prep.prepare(cfg)
    (tmp_path / "p" / "notes.txt").write_text("mine")
    changed = config(
        tmp_path, corpus_folder(tmp_path / "d"), prepared_dir=str(tmp_path / "p"), max_words=8
    )
    assert prep.prepare(changed).manifest["identity"]["cleaning"]["max_words"] == 8
    assert (tmp_path / "p" / "notes.txt").read_text() == "mine"


def test_a_prepared_folder_written_without_the_marker_is_reused(tmp_path):
    cfg = config(tmp_path, corpus_folder(tmp_path / "d"), prepared_dir=str(tmp_path / "p"))
    first = prep.prepare(cfg)
    (tmp_path / "p" / MARKER).unlink()
    assert prep.prepare(cfg).manifest == first.manifest


def test_two_corpora_in_one_prepared_dir_each_keep_their_own_folder(tmp_path):
    d = corpus_folder(tmp_path / "d")
    corpora = [
        {"train": {"src": str(d / "train.de"), "tgt": str(d / "train.en")}},
        {"train": {"src": str(d / "val.de"), "tgt": str(d / "val.en")}, "tag": "<bt>"},
    ]
    dev = {"src": str(d / "val.de"), "tgt": str(d / "val.en")}
    cfg = config_from_dict(
        tiny_config(
            run_dir=str(tmp_path / "run"),
            data={
                "corpora": corpora,
                "dev": dev,
                "workers": 1,
                "prepared_dir": str(tmp_path / "p"),
            },
            tokenizer={"vocab_size": 500},
        )
    )
    first, second = prepare_corpora(cfg, None, False)
    assert first.folder != second.folder
    again = prepare_corpora(cfg, None, False)
    assert [p.manifest for p in again] == [first.manifest, second.manifest]
    assert first.manifest["pairs"] != second.manifest["pairs"]
    listed = json.loads((tmp_path / "p" / MARKER).read_text())["files"]
    assert sorted(listed) == sorted([first.folder.name, second.folder.name])


@pytest.fixture(autouse=True)
def _cache(tmp_path, monkeypatch):
    monkeypatch.setenv("TRANSLATOR_CACHE", str(tmp_path / "cache"))


# ---------------------------------------------------------------- train, average, curves


def test_a_run_dir_of_the_users_is_refused_and_an_earlier_run_is_taken_as_a_run(tmp_path):
    from translator.train.run_dir import RunDir

    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "config.yaml").write_text("my: notes\n")
    message = user_error(RunDir(mine).create)
    assert "run_dir" in message and str(mine) in message and "config.yaml" in message
    assert sorted(p.name for p in mine.iterdir()) == ["config.yaml"]
    log = tmp_path / "log"  # a log of the user's own, under the name a run's has
    log.mkdir()
    (log / "train.log").write_text("my notes\n")
    assert "train.log" in user_error(RunDir(log).create)
    assert (log / "train.log").read_text() == "my notes\n"
    earlier = tmp_path / "earlier"  # a run written without the marker: --resume goes on
    earlier.mkdir()
    for name in ("last.pt", "best.pt", "config.yaml", "notes.txt"):
        (earlier / name).write_bytes(b"")
    RunDir(earlier).create()
    assert "last.pt" in owned(earlier) and "notes.txt" not in owned(earlier)
    RunDir(earlier).clear()
    assert sorted(p.name for p in earlier.iterdir()) == [MARKER, "config.yaml", "notes.txt"]


def test_average_and_curves_refuse_to_write_over_what_they_read(tmp_path):
    from translator.plots.curves import draw_curves
    from translator.train.averaging import average_command

    a, b = tmp_path / "a.pt", tmp_path / "b.pt"
    a.write_bytes(b"weights")
    b.write_bytes(b"weights")
    message = user_error(average_command, None, None, [a, b], b)
    assert "--output" in message and str(b) in message
    assert b.read_bytes() == b"weights"
    summary = tmp_path / "summary.json"
    summary.write_text("{}")
    assert "--plot" in user_error(draw_curves, [(tmp_path, summary)], summary)
    assert summary.read_text() == "{}"


def test_a_folder_one_command_wrote_is_refused_to_another(tmp_path):
    from translator.train.run_dir import RunDir

    run = RunDir(tmp_path / "run")
    run.create()
    run.last.write_bytes(b"weights")
    message = user_error(claim_folder, run.path, "--output", None, "export")
    assert "--output" in message and "translator train" in message
    assert run.last.read_bytes() == b"weights"
