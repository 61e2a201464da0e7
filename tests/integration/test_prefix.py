"""`translate --prefix` and `--prefixes` as a user runs them: every translation begins with
its prefix, a prefix file goes line by line with --input (resumable output included), and
mistakes are one-line errors."""

import pytest
from util import assert_user_error, cli, tiny_config

from translator.config import config_from_dict
from translator.train.trainer import Trainer

SOURCES = ["Ein Hund läuft.", "Zwei Katzen spielen im Garten.", "Ein Mann liest."]
PREFIXES = ["A black", "", "The old man"]


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory):
    root = tmp_path_factory.mktemp("prefix")
    cfg = config_from_dict(tiny_config(run_dir=str(root / "run"), train={"max_steps": 3}))
    Trainer(cfg).run()
    return str(root / "run" / "last.pt")


def test_every_translation_begins_with_the_prefix(checkpoint):
    for extra in ([], ["--beam", "1"], ["--sampling", "topk:5", "--seed", "1"]):
        done = cli("translate", "--checkpoint", checkpoint, "--prefix", "A dog", *extra, *SOURCES)
        assert done.returncode == 0, done.stderr
        lines = done.stdout.splitlines()
        assert len(lines) == 3 and all(line.startswith("A dog") for line in lines), lines


def test_a_prefix_file_goes_with_the_input_line_by_line(checkpoint, tmp_path):
    src, pre = tmp_path / "in.de", tmp_path / "prefixes.en"
    src.write_text("\n".join(SOURCES) + "\n", encoding="utf-8")
    pre.write_text("\n".join(PREFIXES) + "\n", encoding="utf-8")
    printed = cli(
        "translate", "--checkpoint", checkpoint, "--input", str(src), "--prefixes", str(pre)
    )
    assert printed.returncode == 0, printed.stderr
    out = tmp_path / "out.en"
    written = cli(
        "translate", "--checkpoint", checkpoint, "--input", str(src), "--prefixes", str(pre),
        "--output", str(out),
    )  # fmt: skip
    assert written.returncode == 0, written.stderr
    assert out.read_text(encoding="utf-8").splitlines() == printed.stdout.splitlines()
    for line, prefix in zip(printed.stdout.splitlines(), PREFIXES):
        assert line.startswith(prefix)


def test_prefix_mistakes_are_one_line_errors(checkpoint, tmp_path):
    src, pre = tmp_path / "in.de", tmp_path / "prefixes.en"
    src.write_text("\n".join(SOURCES) + "\n", encoding="utf-8")
    pre.write_text("only one\n", encoding="utf-8")
    ck = ["translate", "--checkpoint", checkpoint]
    assert_user_error(cli(*ck, "--input", str(src), "--prefixes", str(pre)), "1 lines", "has 3")
    assert_user_error(
        cli(*ck, "--prefixes", str(pre), "Hallo"), "--prefixes FILE goes with --input"
    )
    assert_user_error(
        cli(*ck, "--prefix", "a", "--prefixes", str(pre), "--input", str(src)), "not both"
    )
    assert_user_error(cli(*ck, "--prefix", "a " * 2000, "Hallo"), "output limit")
