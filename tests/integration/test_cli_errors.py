"""Every mistake a user can make, through the real CLI: one line, exit code 2, no traceback."""

import gzip
import os
import subprocess
import sys
from functools import partial
from pathlib import Path
from types import SimpleNamespace

import pytest
import torch
import yaml
from util import assert_user_error, at_once, cli, tiny_config

from translator.models.checkpoint import load_checkpoint, save_checkpoint

cli = partial(cli, timeout=300)


def write(path, text):
    path.write_text(text, encoding="utf-8")
    return path


# -- command line -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "args, needle, command",
    [
        (["trian"], "No such command 'trian'", "translator"),
        (["train", "--bogus"], "--bogus", "translator train"),
        (["train"], "--config", "translator train"),
        (["translate", "--beam", "x", "a"], "--beam", "translator translate"),
    ],
)
def test_command_line_mistakes_are_one_error_line_pointing_at_help(args, needle, command, here):
    result = here(*args)
    last = assert_user_error(result, needle)
    assert result.stderr.strip() == last, result.stderr
    assert last.endswith(f"(hint: see '{command} --help')"), last


# -- config ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text, needles",
    [
        ("train: [1, 2\n", ["not valid YAML", "line 1:", "flow sequence from line 1"]),
        ("a: 1\ntrain: [1,\n  2\nb: 3\n", ["line 4:", "flow sequence from line 2"]),
        ("train:\n  lrr: 0.1\n", ["train.lrr", "did you mean 'train.lr'"]),
        ("train:\n  lr: fast\n", ["train.lr", "must be a number"]),
        ("model:\n  d_model: 1.5\n", ["model.d_model", "must be an integer"]),
        ("train:\n  lr: -0.1\n", ["train.lr", "greater than 0"]),
        ("decode:\n  beam: 0\n", ["decode.beam", "an integer in [1, 1000]"]),
        ("train:\n  max_minutes: 0\n", ["train.max_minutes", "a number in (0, 1000000]"]),
        ("model:\n  type: gru2seq\n", ["model.type", "transformer, lstm, bahdanau, luong"]),
        ("train: 5\n", ["'train' must be a mapping"]),
        ("- a\n- b\n", ["top level"]),
        ("seed: 1\n", ["missing required key 'run_dir'"]),
        (
            "run_dir: a\ntrain:\n  lr: 1\n  lr: 2\n",
            ["line 4", "key 'lr' is given twice (first on line 3)"],
        ),
    ],
)
def test_config_mistakes(tmp_path, text, needles, here):
    path = write(tmp_path / "bad.yaml", text)
    assert_user_error(here("train", "--config", str(path)), str(path), *needles)


def test_missing_config_file_and_bad_set(tmp_path, here):
    assert_user_error(here("train", "--config", str(tmp_path / "nope.yaml")), "nope.yaml")
    path = write(tmp_path / "ok.yaml", "seed: 1\n")
    assert_user_error(here("train", "--config", str(path), "--set", "train.lr"), "KEY=VALUE")
    assert_user_error(here("train", "--config", str(path), "--set", "train.lrr=1"), "train.lrr")


# -- data -------------------------------------------------------------------------------------


def corpus_dir(
    tmp_path, train_de="Ein Hund.\nEine Katze.\n", train_en="A dog.\nA cat.\n", encoding_bytes=None
):
    folder = tmp_path / "corpus"
    folder.mkdir()
    for split in ("val", "test"):
        write(folder / f"{split}.de", "Ein Hund.\n")
        write(folder / f"{split}.en", "A dog.\n")
    if train_de is not None:
        write(folder / "train.de", train_de)
    if encoding_bytes is not None:
        (folder / "train.en.gz").write_bytes(gzip.compress(encoding_bytes))
    elif train_en is not None:
        write(folder / "train.en", train_en)
    return folder


def train_on(here, tmp_path, folder, *extra):
    cfg = write(tmp_path / "c.yaml", yaml.safe_dump(tiny_config(run_dir=str(tmp_path / "run"))))
    return here("train", "--config", str(cfg), "--set", f"data.dir={folder}", *extra)


def test_missing_data_file(tmp_path, here):
    folder = corpus_dir(tmp_path, train_en=None)
    assert_user_error(train_on(here, tmp_path, folder), "train.en")


def test_missing_data_folder(tmp_path, here):
    assert_user_error(train_on(here, tmp_path, tmp_path / "nowhere"), "data.dir", "nowhere")


def test_line_counts_differ(tmp_path, here):
    folder = corpus_dir(tmp_path, train_de="a\nb\nc\n", train_en="x\ny\n")
    assert_user_error(train_on(here, tmp_path, folder), "train.de", "train.en", "3", "2")


def test_not_utf8_names_file_and_line(tmp_path, here):
    folder = corpus_dir(tmp_path, encoding_bytes=b"A dog.\nA caf\xe9.\n")
    assert_user_error(train_on(here, tmp_path, folder), "train.en.gz:2", "UTF-8")


def test_empty_after_cleaning(tmp_path, here):
    folder = corpus_dir(tmp_path, train_de=" \n\n", train_en="x\n\n")
    assert_user_error(
        train_on(here, tmp_path, folder),
        "empty after cleaning",
        "2 pairs read",
        "2 dropped as empty",
    )


def test_an_empty_dev_split_is_refused_before_training(tmp_path, here):
    folder = corpus_dir(tmp_path)
    write(folder / "val.de", "")
    write(folder / "val.en", "")
    result = train_on(here, tmp_path, folder)
    assert_user_error(result, "the dev split is empty", "data.dev")
    assert not (tmp_path / "run" / "last.pt").exists()


def test_a_mistyped_test_file_is_named_before_training_which_goes_on_without_it(tmp_path, here):
    folder = corpus_dir(tmp_path)
    result = train_on(here, tmp_path, folder, "--set", f"data.test.src={folder}/tset.de",
                      "--set", f"data.test.tgt={folder}/test.en", "--set", "train.max_steps=1")  # fmt: skip
    assert result.returncode == 0, result.stderr[-2000:]
    warned = [line for line in result.stderr.splitlines() if "tset.de" in line]
    assert len(warned) == 1 and "data.test.src: file not found" in warned[0], result.stderr
    assert "translator eval" in warned[0] and (tmp_path / "run" / "last.pt").exists()
    assert warned[0] in (tmp_path / "run" / "train.log").read_text()
    result = here("eval", "--checkpoint", str(tmp_path / "run" / "last.pt"))
    assert_user_error(result, "data.test.src: file not found", "tset.de")


def test_language_not_in_data(tmp_path, here):
    folder = corpus_dir(tmp_path)
    result = train_on(here, tmp_path, folder, "--set", "data.src_lang=fr")
    assert_user_error(result, "data.src_lang", "fr", "de, en")


def test_hub_dataset_offline_points_to_local_files(tmp_path):
    cfg = write(tmp_path / "c.yaml", yaml.safe_dump(tiny_config(run_dir=str(tmp_path / "r"))))
    result = cli("train", "--config", str(cfg), "--set", "data.dataset=nobody/no-such-corpus")
    assert_user_error(result, "nobody/no-such-corpus", "data.dir")


# -- checkpoints ------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def checkpoint(three_steps):
    return three_steps


def test_missing_truncated_and_garbage_checkpoints(tmp_path, checkpoint, here):
    assert_user_error(here("eval", "--checkpoint", str(tmp_path / "none.pt")), "none.pt")
    data = checkpoint.read_bytes()
    cut = tmp_path / "cut.pt"
    cut.write_bytes(data[: len(data) // 2])
    assert_user_error(here("translate", "--checkpoint", str(cut), "Hallo"), "truncated or corrupt")
    junk = tmp_path / "junk.pt"
    junk.write_bytes(b"hello world" * 100)
    assert_user_error(here("translate", "--checkpoint", str(junk), "Hallo"), "junk.pt")
    device = "/dev/null"  # (it exists: not "not found")
    assert_user_error(here("info", device), f"{device} is a pipe or a device, not a checkpoint")


def test_checkpoint_from_an_incompatible_version(tmp_path, checkpoint, here):
    ckpt = load_checkpoint(checkpoint)
    ckpt["format"] = 99
    path = tmp_path / "future.pt"
    torch.save(ckpt, path)
    assert_user_error(here("translate", "--checkpoint", str(path), "Hallo"), "format 99")


def test_checkpoint_with_a_swapped_tokenizer(tmp_path, checkpoint, here):
    ckpt = load_checkpoint(checkpoint)
    src = bytearray(ckpt["tokenizer"]["src"])
    src[len(src) // 2] ^= 0x01  # one bit of the sentencepiece model changed, fingerprint kept
    ckpt["tokenizer"] = {**ckpt["tokenizer"], "src": bytes(src)}
    path = tmp_path / "swapped.pt"
    save_checkpoint(path, {k: v for k, v in ckpt.items() if k not in ("format", "version")})
    result = here("translate", "--checkpoint", str(path), "Hallo")
    assert_user_error(result, "swapped.pt", "fingerprint")


def test_malicious_checkpoint_runs_nothing(tmp_path, here):
    marker = tmp_path / "pwned"

    class Payload:
        def __reduce__(self):
            return (open, (str(marker), "w"))

    path = tmp_path / "evil.pt"
    torch.save({"format": 1, "model": Payload()}, path)
    assert_user_error(here("translate", "--checkpoint", str(path), "Hallo"), "refused to load")
    assert not marker.exists()


# -- translate input --------------------------------------------------------------------------


def test_translate_input_edge_cases(checkpoint, here):
    result = cli(
        "translate", "--checkpoint", str(checkpoint), "--beam", "1", stdin="\n☃ Ein Hund läuft.\n\n"
    )
    assert result.returncode == 0, result.stderr
    lines = result.stdout.split("\n")[:-1]
    assert len(lines) == 3 and lines[0] == "" and lines[2] == ""
    assert "⁇" not in result.stdout and "<unk>" not in result.stdout
    assert_user_error(
        here("translate", "--checkpoint", str(checkpoint), "--output", "x.txt"), "--input"
    )
    assert_user_error(here("eval", "--checkpoint", str(checkpoint), "--split", "train"), "--split")
    # sentences from one place: TEXT and --input together would leave the file untranslated
    both = here("translate", "--checkpoint", str(checkpoint), "--input", __file__, "Ein Hund.")
    assert_user_error(both, "give TEXT arguments or --input F, not both")


# -- files, folders and streams ---------------------------------------------------------------


def run_bytes(*args, stdin: bytes):
    """The CLI with raw bytes on standard input; stdout and stderr as text."""
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1"}
    cmd = [sys.executable, "-m", "translator", *args]
    done = subprocess.run(cmd, input=stdin, capture_output=True, env=env, timeout=300)
    out, err = (stream.decode(errors="replace") for stream in (done.stdout, done.stderr))
    return SimpleNamespace(returncode=done.returncode, stdout=out, stderr=err)


@pytest.fixture
def files(tmp_path, checkpoint):
    """The paths the cases below name: a folder, a file in a missing folder, a text file."""
    folder = tmp_path / "folder"
    folder.mkdir()
    text = write(tmp_path / "text.de", "Ein Hund.\n")
    names = {"CKPT": str(checkpoint), "RUN": str(checkpoint.parent), "TEXT": str(text)}
    names.update(FOLDER=str(folder), MISSING=str(tmp_path / "missing" / "out"))
    names["PNG"] = str(tmp_path / "curves.png")
    names["LONG"] = str(tmp_path / ("L" * 300))  # over any file system's 255 bytes a name
    names["UNDERFILE"] = str(text / "out")  # a path through a file
    names["PROC"] = "/proc/translator-out"  # a folder of a file system that makes no files
    return names


on_linux = pytest.mark.skipif(not Path("/proc/self").is_dir(), reason="no /proc")
WRITES = [
    "translate --checkpoint CKPT --input TEXT --output {}",
    "translate --checkpoint CKPT --plot-attention {} Hallo",
    "eval --checkpoint CKPT --src TEXT --ref TEXT --output {}",
    "eval --checkpoint CKPT --src TEXT --ref TEXT --plot {}",
    "average --checkpoint CKPT --checkpoint CKPT --output {}",
    "curves RUN --plot {}",
]


@pytest.mark.parametrize("command", WRITES)
@pytest.mark.parametrize(
    "place, needles",
    [
        ("FOLDER", ["folder", "is a folder"]),
        ("MISSING", ["missing", "not exist"]),
        ("LONG", ["LLLL", "too long"]),
        ("UNDERFILE", ["text.de", "folder"]),
        pytest.param("PROC", ["cannot write /proc/translator-out"], marks=on_linux),
    ],
)
def test_a_file_to_write_that_cannot_be(files, command, place, needles, here):
    args = [files.get(word, word) for word in command.format(place).split()]
    assert_user_error(here(*args), *needles)


@on_linux
def test_an_output_that_cannot_be_made_is_named_before_the_model_is_read(files, here):
    """(TEXT is no checkpoint: reading it would be the first error.)"""
    args = ["eval", "--checkpoint", files["TEXT"], "--src", files["TEXT"], "--ref", files["TEXT"]]
    assert_user_error(here(*args, "--output", files["PROC"]), "cannot write /proc/translator-out")
    assert_user_error(here(*args, "--output", files["TEXT"] + ".out"), "text.de")


@pytest.mark.parametrize("place, needles", [("LONG", ["too long"]), ("UNDERFILE", ["text.de"])])
def test_a_folder_to_write_that_cannot_be(files, place, needles, here):
    export = ["export", "--checkpoint", files["CKPT"], "--output", files[place]]
    assert_user_error(here(*export), *needles)
    assert_user_error(here("train", "--config", "configs/demo.yaml", "--set",
                           f"run_dir={files[place]}"), *needles)  # fmt: skip


READS = [
    ("translate --checkpoint CKPT --input FOLDER", ["folder", "is a folder"]),
    ("translate --checkpoint CKPT --input MISSING", ["not found", "out"]),
    ("eval --checkpoint CKPT --src MISSING --ref TEXT", ["not found", "out"]),
    ("eval --checkpoint CKPT --src TEXT --ref FOLDER", ["folder", "is a folder"]),
    ("translate --checkpoint FOLDER Hallo", ["folder", "not an exported model"]),
    ("eval --checkpoint TEXT", ["text.de"]),
    ("average --checkpoint CKPT --checkpoint FOLDER --output MISSING", ["missing"]),
    ("export --checkpoint FOLDER --output MISSING", ["folder", "not a checkpoint file"]),
    ("export --checkpoint CKPT --output TEXT", ["text.de", "is a file"]),
    ("train --config FOLDER", ["folder"]),
    ("curves FOLDER --plot MISSING", ["missing"]),
    ("curves TEXT --plot PNG", ["text.de", "summary"]),
]


@pytest.mark.parametrize("command, needles", READS)
def test_a_file_or_folder_to_read_that_is_not_one(files, command, needles, here):
    args = [files.get(word, word) for word in command.split()]
    assert_user_error(here(*args), *needles)


def test_text_that_is_not_utf8_on_stdin_in_arguments_and_typed(checkpoint):
    latin1 = "Ein Café.\n".encode("latin-1")
    ckpt = ["translate", "--checkpoint", str(checkpoint)]
    sampled = [*ckpt, "--sampling", "topk:3", "--seed", "1"]  # read in whole batches
    piped, typed, argument, piped_sampled = at_once(
        lambda: run_bytes(*ckpt, stdin=b"Ein Hund.\n" + latin1),
        lambda: run_bytes(*ckpt, "--interactive", stdin=latin1),
        lambda: run_bytes(*ckpt, "Ein Hund.", b"Ein Caf\xe9", stdin=b""),
        lambda: run_bytes(*sampled, stdin=b"Ein Hund.\nEine Katze.\n" + latin1),
    )
    assert_user_error(piped, "standard input, line 2", "UTF-8", "0xe9")
    assert_user_error(piped_sampled, "standard input, line 3", "UTF-8", "0xe9")
    # the lines before the bad one are translated and written
    assert len(piped.stdout.splitlines()) == 1 and len(piped_sampled.stdout.splitlines()) == 2
    assert_user_error(typed, "UTF-8", "0xe9")
    assert_user_error(argument, "TEXT argument 2", "UTF-8", "0xe9")


def test_serve_checkpoints_that_are_not_models(files):
    pytest.importorskip("fastapi", reason="the `serve` extra is not installed")
    pytest.importorskip("uvicorn", reason="the `serve` extra is not installed")
    # subprocesses: a server started by mistake would hold this process
    folder, text = at_once(
        lambda: cli("serve", "--checkpoint", files["FOLDER"], "--port", "0"),
        lambda: cli("serve", "--checkpoint", files["TEXT"], "--port", "0"),
    )
    assert_user_error(folder, "folder", "not an exported model")
    assert_user_error(text, "text.de")
    # a second model is refused, not served in place of the first
    result = cli("serve", "--checkpoint", files["CKPT"], "--checkpoint", files["CKPT"])
    assert_user_error(result, "2 --checkpoint options", "serve takes one model")


def test_serve_on_port_0_names_the_port_it_took(files, tmp_path):
    """--port 0: the system's free port, which the start-up line names and which answers."""
    import re
    import signal
    import time
    import urllib.request

    pytest.importorskip("uvicorn", reason="the `serve` extra is not installed")
    log = tmp_path / "serve.log"
    args = [
        sys.executable,
        "-m",
        "translator",
        "serve",
        "--checkpoint",
        files["CKPT"],
        "--port",
        "0",
    ]
    with open(log, "wb") as out:
        proc = subprocess.Popen(args, stdout=out, stderr=out)
    try:
        for _ in range(600):
            found = re.search(r"serving .* on http://127\.0\.0\.1:(\d+)/", log.read_text())
            if found or proc.poll() is not None:
                break
            time.sleep(0.1)
        assert found and found.group(1) != "0", log.read_text()
        health = f"http://127.0.0.1:{found.group(1)}/health"
        for _ in range(600):
            try:
                with urllib.request.urlopen(health, timeout=5) as res:
                    assert res.status == 200
                    break
            except OSError:
                time.sleep(0.1)
        else:
            raise AssertionError(log.read_text())
    finally:
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=60) == 0, log.read_text()


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs Linux's /dev/full")
def test_a_full_standard_output_is_one_line(files):
    args = [sys.executable, "-m", "translator", "translate", "--checkpoint", files["CKPT"]]
    with open("/dev/full", "w") as full:
        result = subprocess.run([*args, "Ein Hund."], stdout=full, stderr=subprocess.PIPE,
                                text=True, timeout=600)  # fmt: skip
    assert_user_error(result, "standard output: No space left on device")


def test_ctrl_c_is_exit_130_and_leaves_no_output(files, tmp_path, here, monkeypatch):
    """typer turns Ctrl-C into an exit code it returns: the command still ends 130, saying
    so, and a script's `&&` stops there."""
    from translator.decode import resumable

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(resumable, "_append", interrupted)
    out = tmp_path / "out.en"
    result = here("translate", "--checkpoint", files["CKPT"], "--input", files["TEXT"],
                  "--output", str(out))  # fmt: skip
    assert result.returncode == 130 and "interrupted" in result.stderr
    assert not out.exists()


@pytest.mark.parametrize("extra, named", [(["--nbest", "2"], "--nbest"), (["Hallo"], "TEXT"),
                                          (["--input", "TEXT"], "--input")])  # fmt: skip
def test_interactive_takes_no_other_source_nor_an_nbest(files, here, extra, named):
    """It would read neither, and it prints one translation a sentence."""
    args = ["translate", "--checkpoint", files["CKPT"], "--interactive"]
    assert_user_error(here(*args, *[files.get(w, w) for w in extra]), "--interactive", named)


def test_sigterm_is_an_interruption_too(files, tmp_path):
    """SIGTERM (a supervisor's stop) while translating: as Ctrl-C, the command says so and
    ends 130, its cleanup having run (no temporary file, no output)."""
    out = tmp_path / "out.en"
    script = f"""
import os, signal, sys, time
from translator.decode import resumable

def terminated(*args, **kwargs):
    os.kill(os.getpid(), signal.SIGTERM)
    time.sleep(30)

resumable._append = terminated
from translator.cli import main
sys.argv = ["translator", "translate", "--checkpoint", {files["CKPT"]!r}, "--input",
            {files["TEXT"]!r}, "--output", {str(out)!r}]
main()
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=300)  # fmt: skip
    assert done.returncode == 130 and done.stderr.endswith("interrupted\n"), done.stderr[-2000:]
    assert not out.exists() and not list(tmp_path.glob(".out.en.*.tmp"))


def test_a_full_disk_names_the_file_and_keeps_the_old_one(files, tmp_path):
    out = write(tmp_path / "out.en", "old translations\n")
    (tmp_path / "sitecustomize.py").write_text(  # this process's disk is full
        "import errno, os\n"
        "def fsync(fd):\n"
        "    raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))\n"
        "os.fsync = fsync\n"
    )
    path = f"{tmp_path}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"
    args = ["translate", "--checkpoint", files["CKPT"], "--input", files["TEXT"]]
    result = cli(*args, "--output", str(out), env_extra={"PYTHONPATH": path})
    assert_user_error(result, f"{out}: No space left on device")
    assert out.read_text(encoding="utf-8") == "old translations\n"
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".")) == []


def test_a_file_beside_the_output_that_cannot_be_made(files, tmp_path, here):
    """A translation keeps a journal (documents) or a lock (lines) beside its output: a
    folder or a dangling link in its place, or a file system that makes no new files
    (/proc), is one line naming that file, not a traceback after decoding."""
    write(tmp_path / "doc.md", "Ein Hund.\n\nZwei Katzen.\n")
    (tmp_path / "out.md.journal").mkdir()
    (tmp_path / "linked.md.journal").symlink_to(tmp_path / "nowhere")
    base = ["translate", "--checkpoint", files["CKPT"], "--input"]
    calls = [
        (str(tmp_path / "doc.md"), str(tmp_path / "out.md"), ["out.md.journal", "in the way"]),
        (str(tmp_path / "doc.md"), str(tmp_path / "linked.md"), ["linked.md.journal", "way"]),
    ]
    if Path("/proc/version").is_file():
        calls += [
            (str(tmp_path / "doc.md"), "/proc/version", ["cannot write /proc/version"]),
            (files["TEXT"], "/proc/version", ["cannot write /proc/version"]),
        ]
    for source, output, needles in calls:
        result = here(*base, source, "--output", output)
        assert_user_error(result, *needles)
        assert "doc.md:" not in result.stderr  # named for itself, not the file being read
    assert not (tmp_path / "nowhere").exists()
