"""translate --input F --output G on a large file (decode/resumable.py): a run that stops
continues where it stopped, no line lost or doubled, and G appears only when whole."""

import pytest

from translator.config import DecodeConfig
from translator.decode import resumable, translate_io
from translator.decode.line_guides import LineGuides
from translator.decode.request import DecodeRequest
from translator.decode.sampling import Sampling
from translator.decode.translator import Translation
from translator.errors import UserError


class Chars:
    """A tokenizer stand-in: a target text's ids are its characters' code points."""

    def encode_tgt(self, texts):
        return [[1, *map(ord, t), 2] for t in texts]


def text_of(ids) -> str:
    return "".join(map(chr, ids))


class Upper:
    """A translator that upper-cases, and stops (like Ctrl-C) after `stop_after` chunks."""

    tokenizer, max_target, source_prefix = Chars(), 10_000, ()

    def __init__(self, stop_after=None):
        self.calls, self.stop_after = 0, stop_after
        self.seeds = []

    def translate(self, lines, request, progress=False):
        if self.stop_after is not None and self.calls >= self.stop_after:
            raise KeyboardInterrupt
        self.calls += 1
        if request.sampling is not None:
            self.seeds.append(request.sampling.seed)
        prefixes = [text_of(p) for p in request.prefixes or [[] for _ in lines]]
        musts = [[text_of(c) for c in m] for m in request.phrases or [[] for _ in lines]]
        return [
            [Translation(p + line.upper() + "".join(f" +{c}" for c in must), 0.0)]
            for p, line, must in zip(prefixes, lines, musts)
        ]


@pytest.fixture
def job(tmp_path, monkeypatch):
    monkeypatch.setattr(translate_io, "FILE_CHUNK", 3)
    src = tmp_path / "in.txt"
    src.write_text("".join(f"line {i}\n" for i in range(10)), encoding="utf-8")
    return src, tmp_path / "out.txt"


def run(translator, src, out, model="m", prefixes=None, sampling=None, nbest=1):
    request = DecodeRequest(DecodeConfig(), nbest, sampling)
    resumable.translate_file(translator, src, out, request, model, prefixes)


def test_a_stopped_run_continues_and_writes_every_line_once(job):
    src, out = job
    with pytest.raises(KeyboardInterrupt):
        run(Upper(stop_after=2), src, out)
    assert not out.exists()  # never half written
    partial = out.with_name("out.txt.partial")
    assert partial.read_text().splitlines() == [f"LINE {i}" for i in range(6)]
    with partial.open("a") as f:  # a chunk written after the last record: dropped
        f.write("LINE 6\nLINE")
    again = Upper()
    run(again, src, out)
    assert again.calls == 2  # lines 6-8 and 9: the first six were not translated again
    assert out.read_text().splitlines() == [f"LINE {i}" for i in range(10)]
    assert not partial.exists() and not out.with_name("out.txt.partial.json").exists()


def test_another_input_or_model_starts_over(job):
    src, out = job
    with pytest.raises(KeyboardInterrupt):
        run(Upper(stop_after=1), src, out)
    again = Upper()
    run(again, src, out, model="another")
    assert again.calls == 4 and len(out.read_text().splitlines()) == 10
    with pytest.raises(KeyboardInterrupt):
        run(Upper(stop_after=1), src, out)
    src.write_text("".join(f"row {i}\n" for i in range(10)), encoding="utf-8")
    again = Upper()
    run(again, src, out)
    assert again.calls == 4 and out.read_text().splitlines()[0] == "ROW 0"


def test_an_export_folder_written_anew_in_place_starts_over(job, tmp_path):
    """An exported folder is known by its files, not its path: another model exported into
    the same folder is not taken for the one a stopped run translated with."""
    src, out = job
    folder = tmp_path / "exported"
    folder.mkdir()
    (folder / "model.bin").write_bytes(b"old model")
    (folder / "manifest.json").write_text("{}")
    with pytest.raises(KeyboardInterrupt):
        run(Upper(stop_after=1), src, out, model=resumable.model_stamps([folder]))
    (folder / "model.bin").unlink()  # rewritten in place, as an export does
    (folder / "model.bin").write_bytes(b"new model, another size")
    again = Upper()
    run(again, src, out, model=resumable.model_stamps([folder]))
    assert again.calls == 4 and len(out.read_text().splitlines()) == 10
    assert resumable.model_stamps([folder]) == resumable.model_stamps([folder])


def test_a_run_writing_into_an_export_folder_resumes_with_it(job, tmp_path):
    """Files beside an export's own (its marker lists them) are no part of the model: a run
    whose output, and so its .partial files, lies in the folder goes on where it stopped."""
    from translator.fileio.outputs import record

    src, _ = job
    folder = tmp_path / "exported"
    folder.mkdir()
    (folder / "model.bin").write_bytes(b"model")
    record(folder, ["model.bin"], "export")
    out = folder / "out.txt"
    with pytest.raises(KeyboardInterrupt):
        run(Upper(stop_after=1), src, out, model=resumable.model_stamps([folder]))
    (folder / "notes.txt").write_text("mine")
    again = Upper()
    run(again, src, out, model=resumable.model_stamps([folder]))
    assert again.calls == 3 and len(out.read_text().splitlines()) == 10


def test_sampling_draws_each_chunk_from_its_own_seed(job):
    src, out = job
    straight = Upper()
    run(straight, src, out, sampling=Sampling(None, 0.9, 1.0, seed=7))
    stopped = Upper(stop_after=2)
    with pytest.raises(KeyboardInterrupt):
        run(stopped, src, out.with_name("b.txt"), sampling=Sampling(None, 0.9, 1.0, seed=7))
    resumed = Upper()
    run(resumed, src, out.with_name("b.txt"), sampling=Sampling(None, 0.9, 1.0, seed=7))
    assert straight.seeds == [7, 8, 9, 10] == stopped.seeds + resumed.seeds
    # standard output and a guided request draw the chunks from the same seeds
    printed = Upper()
    guides = LineGuides(prefix="p: ")
    request = DecodeRequest(DecodeConfig(), 1, Sampling(None, 0.9, 1.0, seed=7))
    translate_io.print_file(printed, src, request, guides)
    assert printed.seeds == [7, 8, 9, 10]


def test_a_resumed_run_keeps_each_line_with_its_own_prefix_and_phrases(job, tmp_path):
    src, out = job
    given = tmp_path / "prefixes.txt"
    given.write_text("".join(f"p{i}: \n" for i in range(10)), encoding="utf-8")
    musts = tmp_path / "constraints.txt"
    musts.write_text("".join(f"c{i}\tlast\n" if i % 2 else "\n" for i in range(10)))
    guides = LineGuides(prefix_file=given, constraint_file=musts, constraints=["all"])
    guides.check(src)
    with pytest.raises(KeyboardInterrupt):
        run(Upper(stop_after=2), src, out, prefixes=guides)
    again = Upper()
    run(again, src, out, prefixes=guides)
    assert again.calls == 2
    want = [f"p{i}: LINE {i} +all" + (f" +c{i} +last" if i % 2 else "") for i in range(10)]
    assert out.read_text().splitlines() == want
    with pytest.raises(KeyboardInterrupt):  # other guides: another job, started over
        run(Upper(stop_after=1), src, out, prefixes=LineGuides(prefix="x "))
    again = Upper()
    run(again, src, out, prefixes=guides)
    assert again.calls == 4


def test_a_guide_file_of_another_length_is_one_line(job, tmp_path):
    src, _ = job
    given = tmp_path / "prefixes.txt"
    given.write_text("a\nb\n", encoding="utf-8")
    with pytest.raises(UserError, match="2 lines, but --input .* has 10"):
        LineGuides(prefix_file=given).check(src)
    with pytest.raises(UserError, match="--constraints .* 2 lines, but --input"):
        LineGuides(constraint_file=given).check(src)
    with pytest.raises(UserError, match="goes with --input"):
        LineGuides(constraint_file=given).check(None)


def test_an_empty_phrase_in_a_constraints_file_is_one_line_naming_it(job, tmp_path):
    """A blank line is none; an empty phrase beside others is refused before any work, as
    an empty --constraint is."""
    src, _ = job
    given = tmp_path / "phrases.txt"
    lines = ["a\tb", " ", "", "c\t\td", *["e"] * 6]
    given.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(UserError, match=r"phrases.txt:4: an empty phrase"):
        LineGuides(constraint_file=given).check(src)
    given.write_text("\n".join(["a\tb", " ", "", "c\td", *["e"] * 6]) + "\n", encoding="utf-8")
    LineGuides(constraint_file=given).check(src)
    _, phrases = LineGuides(constraint_file=given).reader()([str(i) for i in range(10)])
    assert phrases[:4] == [["a", "b"], [], [], ["c", "d"]]


def test_nbest_lines_are_numbered_by_input_line_across_chunks_and_runs(job):
    src, out = job
    with pytest.raises(KeyboardInterrupt):
        run(Upper(stop_after=2), src, out, nbest=2)
    run(Upper(), src, out, nbest=2)
    lines = [line.split("\t") for line in out.read_text().splitlines()]
    assert [(int(i), text) for i, _, text in lines] == [(i, f"LINE {i}") for i in range(10)]


def test_a_link_is_kept_and_a_fifo_written_through(job, tmp_path):
    """--output a symbolic link: the file it points to is written, with its .partial beside
    that file; a FIFO (/dev/stdout) gets the lines, and stays a FIFO."""
    import os
    import threading

    src, _ = job
    real = tmp_path / "real.txt"
    link = tmp_path / "link.txt"
    link.symlink_to(real)
    run(Upper(), src, link)
    assert link.is_symlink() and real.read_text().splitlines()[0] == "LINE 0"
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    got = []
    reader = threading.Thread(target=lambda: got.append(open(fifo, "rb").read()))
    reader.start()
    run(Upper(), src, fifo)
    reader.join(timeout=10)
    assert got[0].decode().splitlines() == [f"LINE {i}" for i in range(10)]
    assert not fifo.is_file()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.txt", "link.txt", "pipe", "real.txt"]


def test_files_of_the_partial_names_that_are_the_users_are_not_replaced(job, tmp_path):
    """G.partial without translator's record beside it is the user's: refused, kept; a run
    stopped before its first chunk left its record, so it is translator's."""
    src, out = job
    partial = out.with_name(out.name + ".partial")
    partial.write_text("my draft")
    with pytest.raises(UserError, match="out.txt.partial exists and is not a stopped"):
        run(Upper(), src, out)
    assert partial.read_text() == "my draft" and not out.exists()
    partial.unlink()
    with pytest.raises(KeyboardInterrupt):
        run(Upper(stop_after=0), src, out)  # stopped before any chunk was done
    run(Upper(), src, out)
    assert out.read_text().splitlines()[0] == "LINE 0"


class Steps:
    """A progress bar that records each advance."""

    def __init__(self, **_):
        self.steps = []

    def update(self, n=1):
        self.steps.append(n)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


class CharIds:
    def encode_src(self, lines):
        return [[*map(ord, line), 2] for line in lines]


def test_a_callers_bar_advances_batch_by_batch_with_blank_lines_at_once():
    """... and the longest lines come first, so the bar's time left errs long, not short."""
    from translator.decode.batches import in_batches

    lines = ["a", "", "bbb", "cc", " ", "dddd", "e"]
    bar, lengths = Steps(), []

    def run_batch(ids, request):
        lengths.append(sorted(len(row) for row in ids))
        return [[Translation(str(len(row)), 0.0)] for row in ids]

    request = DecodeRequest(DecodeConfig(batch_size=2), 1)
    found = in_batches(CharIds(), lines, 100, request, (), bar, run_batch)
    assert lengths == [[5], [3, 4], [2, 2]]
    assert bar.steps == [2, 1, 2, 2]
    assert [hyps[0].text for hyps in found] == ["2", "", "4", "3", "", "5", "2"]


def test_a_file_job_hands_its_bar_to_each_translate_call_and_counts_no_line_twice(job, monkeypatch):
    src, out = job
    bars = []
    monkeypatch.setattr(resumable, "progress_bar", lambda **kw: bars.append(Steps()) or bars[-1])

    class Counting(Upper):
        def translate(self, lines, request, progress=False):
            progress.update(len(lines))
            return super().translate(lines, request)

    run(Counting(), src, out)
    assert bars[0].steps == [3, 3, 3, 1]  # the chunks of 3 lines, each counted once
    assert out.read_text(encoding="utf-8").splitlines()[9] == "LINE 9"


def test_a_second_translation_into_the_same_file_is_refused_while_the_first_runs(job, tmp_path):
    """A second process translating into G while the first does (the lock is the file's,
    so another process is refused as the second job here is)."""
    import subprocess
    import sys

    src, out = job
    lock = tmp_path / "out.txt.partial.lock"

    class Second(Upper):
        def translate(self, lines, request, progress=False):
            if not self.calls:  # the first job is under way: another one into the same file
                holder = "import fcntl, os, sys; fd = os.open(sys.argv[1], os.O_RDWR); " \
                    "fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)"  # fmt: skip
                other = subprocess.run([sys.executable, "-c", holder, str(lock)])
                assert other.returncode != 0  # held by this process
                with pytest.raises(UserError, match="out.txt is being written by another"):
                    run(Upper(), src, tmp_path / "." / "out.txt")
            return super().translate(lines, request, progress)

    run(Second(), src, out)
    assert out.read_text().splitlines() == [f"LINE {i}" for i in range(10)]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.txt", "out.txt"]  # no lock left


def test_a_file_of_the_users_named_as_the_lock_is_not_taken(job, tmp_path):
    src, out = job
    (tmp_path / "out.txt.partial.lock").write_text("mine")
    with pytest.raises(UserError, match="out.txt.partial.lock exists and is not translator's"):
        run(Upper(), src, out)
    assert (tmp_path / "out.txt.partial.lock").read_text() == "mine" and not out.exists()
