"""Commands as a user runs them never delete or replace what translator did not write: a
folder of the user's is refused, an output that is also an input or another output is
refused, each with one line and exit code 2, and the user's files are as they were."""

import json
import signal
import subprocess
import sys

import pytest
import yaml
from checkpoints import needs_ct2, untrained
from util import assert_user_error, tiny_config

from translator.fileio.outputs import MARKER


@pytest.fixture(scope="module")
def ckpt(tmp_path_factory):
    return untrained(tmp_path_factory.mktemp("teacher"))


def corpus(folder, n=4):
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "train.de").write_text("".join(f"Ein Hund {i}.\n" for i in range(n)))
    (folder / "train.en").write_text("".join(f"A dog {i}.\n" for i in range(n)))
    return {"src": str(folder / "train.de"), "tgt": str(folder / "train.en")}


def distill_config(tmp_path, files):
    """A config file whose training and dev data are `files` (corpus)."""
    config = tmp_path / "c.yaml"
    data = {"train": files, "dev": files}
    config.write_text(yaml.safe_dump(tiny_config(run_dir=str(tmp_path / "run"), data=data)))
    return config


@needs_ct2
def test_export_refuses_a_folder_with_another_programs_manifest(ckpt, tmp_path, here):
    theirs = tmp_path / "app"
    theirs.mkdir()
    (theirs / "manifest.json").write_text('{"name": "my web app"}')
    (theirs / "index.html").write_text("<html></html>")
    result = here("export", "--checkpoint", str(ckpt), "--output", str(theirs))
    assert_user_error(result, "--output", str(theirs), "did not write")
    assert (theirs / "manifest.json").read_text() == '{"name": "my web app"}'
    assert (theirs / "index.html").read_text() == "<html></html>"
    # an export of translator's own is replaced; a file put beside it stays
    out = tmp_path / "model"
    assert here("export", "--checkpoint", str(ckpt), "--output", str(out)).returncode == 0
    (out / "README").write_text("notes")
    again = here(
        "export", "--checkpoint", str(ckpt), "--output", str(out), "--quantization", "int8"
    )
    assert again.returncode == 0, again.stderr
    assert json.loads((out / "manifest.json").read_text())["quantization"] == "int8"
    assert (out / "README").read_text() == "notes"


@needs_ct2
def test_an_export_written_without_the_marker_is_replaced_as_before(ckpt, tmp_path, here):
    out = tmp_path / "model"
    assert here("export", "--checkpoint", str(ckpt), "--output", str(out)).returncode == 0
    (out / MARKER).unlink()
    again = here(
        "export", "--checkpoint", str(ckpt), "--output", str(out), "--quantization", "int8"
    )
    assert again.returncode == 0, again.stderr


def test_distill_refuses_to_write_into_the_corpus_it_distills(ckpt, tmp_path, here):
    data = tmp_path / "corpus"
    files = corpus(data)
    config = distill_config(tmp_path, files)
    before = (data / "train.en").read_text()
    result = here("distill", "--checkpoint", str(ckpt), "--config", str(config), "--out", str(data),
                  "--beam", "1", "--device", "cpu")  # fmt: skip
    assert_user_error(result, "--out", str(data))
    assert (data / "train.en").read_text() == before
    assert sorted(p.name for p in data.iterdir()) == ["train.de", "train.en"]


def test_distill_refuses_a_folder_of_the_users(ckpt, tmp_path, here):
    files = corpus(tmp_path / "corpus")
    config = distill_config(tmp_path, files)
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "train.en").write_text("my own translations\n")
    result = here("distill", "--checkpoint", str(ckpt), "--config", str(config), "--out", str(mine),
                  "--beam", "1", "--device", "cpu")  # fmt: skip
    assert_user_error(result, "--out", str(mine), "did not write")
    assert (mine / "train.en").read_text() == "my own translations\n"


def test_distill_keeps_a_file_the_user_put_in_its_own_folder(ckpt, tmp_path, here):
    """In a folder distill made, a file of the user's that a later distill (of two corpora)
    would write is refused by name before any work, and kept."""
    files = corpus(tmp_path / "corpus")
    config = tmp_path / "c.yaml"
    two = {"corpora": [{"train": files}, {"train": files}], "dev": files}
    config.write_text(yaml.safe_dump(tiny_config(run_dir=str(tmp_path / "run"), data=two)))
    out = tmp_path / "out"
    out.mkdir()
    (out / ".translator-output.json").write_text(
        '{"written_by": "translator distill", "files": []}'
    )
    (out / "train1.en").write_text("my notes\n")
    result = here("distill", "--checkpoint", str(ckpt), "--config", str(config), "--out", str(out),
                  "--beam", "1", "--device", "cpu")  # fmt: skip
    assert_user_error(result, f"{out / 'train1.en'} was not written by translator")
    assert (out / "train1.en").read_text() == "my notes\n"
    assert not (out / "train0.en").exists()  # refused before any work


def test_a_distill_killed_outright_goes_on_when_run_again(ckpt, tmp_path, here):
    """A distill killed (SIGKILL, or SIGTERM's default) before it could list what it wrote:
    the files it had made are still its own to the next run, which finishes the corpus."""
    files = corpus(tmp_path / "corpus")
    config = distill_config(tmp_path, files)
    out = tmp_path / "out"
    args = ["distill", "--checkpoint", str(ckpt), "--config", str(config), "--out", str(out),
            "--beam", "1", "--device", "cpu"]  # fmt: skip
    killed = f"""
import os, signal, sys
import translator.decode.distill as distill

def killed(engine, cfg, folder, *rest):  # the source copy made, then killed outright
    (folder / "train.de").write_text("Ein Hund 0.\\n")
    os.kill(os.getpid(), signal.SIGKILL)

distill.distill_corpora = killed
from translator.cli import main
sys.argv = ["translator", *{args!r}]
main()
"""
    done = subprocess.run([sys.executable, "-c", killed], capture_output=True, timeout=300)
    assert done.returncode == -signal.SIGKILL, done.stderr.decode()[-2000:]
    assert (out / "train.de").read_text() == "Ein Hund 0.\n"
    again = here(*args)
    assert again.returncode == 0, again.stderr
    assert (out / "train.de").read_text() == (tmp_path / "corpus" / "train.de").read_text()
    assert len((out / "train.en").read_text().splitlines()) == 4


def test_filter_refuses_one_file_for_both_sides(ckpt, tmp_path, here):
    files = corpus(tmp_path / "c")
    out = tmp_path / "kept.txt"
    result = here("filter", "--checkpoint", str(ckpt), "--src", files["src"], "--tgt", files["tgt"],
                  "--out-src", str(out), "--out-tgt", str(out), "--keep", "0.5",
                  "--device", "cpu")  # fmt: skip
    assert_user_error(result, "--out-tgt", "--out-src", str(out))
    assert not out.exists()


def test_filter_and_score_refuse_to_write_over_their_input(ckpt, tmp_path, here):
    files = corpus(tmp_path / "c")
    before = (tmp_path / "c" / "train.en").read_text()
    result = here("filter", "--checkpoint", str(ckpt), "--src", files["src"], "--tgt", files["tgt"],
                  "--out-src", str(tmp_path / "k.de"), "--out-tgt", files["tgt"], "--keep", "0.5",
                  "--device", "cpu")  # fmt: skip
    assert_user_error(result, "--out-tgt", "--tgt")
    scored = here("score", "--checkpoint", str(ckpt), "--src", files["src"], "--tgt", files["tgt"],
                  "--output", files["src"], "--device", "cpu")  # fmt: skip
    assert_user_error(scored, "--output", "--src")
    assert (tmp_path / "c" / "train.en").read_text() == before
    assert (tmp_path / "c" / "train.de").read_text().startswith("Ein Hund 0.")


def test_translate_and_eval_refuse_to_write_over_their_input(ckpt, tmp_path, here):
    files = corpus(tmp_path / "c")
    before = (tmp_path / "c" / "train.de").read_text()
    result = here("translate", "--checkpoint", str(ckpt), "--input", files["src"],
                  "--output", files["src"], "--device", "cpu")  # fmt: skip
    assert_user_error(result, "--output", "--input", files["src"])
    scored = here("eval", "--checkpoint", str(ckpt), "--src", files["src"], "--ref", files["tgt"],
                  "--output", files["tgt"], "--device", "cpu")  # fmt: skip
    assert_user_error(scored, "--output", "--ref")
    assert (tmp_path / "c" / "train.de").read_text() == before
    assert (tmp_path / "c" / "train.en").read_text().startswith("A dog 0.")


def test_eval_refuses_to_write_over_the_test_file_its_config_names(ckpt, tmp_path, here):
    """The test split comes from the model's config (here data.test through --set), not
    from an option: an --output naming its reference is refused all the same."""
    files = corpus(tmp_path / "c")
    before = (tmp_path / "c" / "train.en").read_text()
    result = here("eval", "--checkpoint", str(ckpt), "--set", f"data.test.src={files['src']}",
                  "--set", f"data.test.tgt={files['tgt']}", "--output", files["tgt"],
                  "--device", "cpu")  # fmt: skip
    assert_user_error(result, "--output", "model's data", "train.en")
    assert (tmp_path / "c" / "train.en").read_text() == before


def test_train_refuses_a_run_dir_that_holds_the_users_files(tmp_path, here):
    mine = tmp_path / "project"
    mine.mkdir()
    config = mine / "config.yaml"
    config.write_text(yaml.safe_dump(tiny_config(run_dir=str(mine), train={"max_steps": 1})))
    before = config.read_text()
    result = here("train", "--config", str(config))
    assert_user_error(result, "run_dir", str(mine), "config.yaml")
    assert config.read_text() == before
    assert sorted(p.name for p in mine.iterdir()) == ["config.yaml"]
