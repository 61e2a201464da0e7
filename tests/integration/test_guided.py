"""`translate --prefix/--prefixes`, `--constraint/--constraints` and `--terms` as a user runs
them: every translation begins with its prefix and holds its phrases, files go line by line
with --input (resumable output included), and mistakes are one-line errors."""

import json

import pytest
from util import assert_user_error

SOURCES = ["Ein Hund läuft.", "Zwei Katzen spielen im Garten.", "Ein Mann liest."]
PREFIXES = ["A black", "", "The old man"]


@pytest.fixture(scope="module")
def checkpoint(three_steps):
    return str(three_steps)


def test_every_translation_begins_with_the_prefix(checkpoint, here):
    for extra in ([], ["--beam", "1"], ["--sampling", "topk:5", "--seed", "1"]):
        done = here("translate", "--checkpoint", checkpoint, "--prefix", "A dog", *extra, *SOURCES)
        assert done.returncode == 0, done.stderr
        lines = done.stdout.splitlines()
        assert len(lines) == 3 and all(line.startswith("A dog") for line in lines), lines


def test_a_prefix_file_goes_with_the_input_line_by_line(checkpoint, tmp_path, here):
    src, pre = tmp_path / "in.de", tmp_path / "prefixes.en"
    src.write_text("\n".join(SOURCES) + "\n", encoding="utf-8")
    pre.write_text("\n".join(PREFIXES) + "\n", encoding="utf-8")
    printed = here(
        "translate", "--checkpoint", checkpoint, "--input", str(src), "--prefixes", str(pre)
    )
    assert printed.returncode == 0, printed.stderr
    out = tmp_path / "out.en"
    written = here(
        "translate", "--checkpoint", checkpoint, "--input", str(src), "--prefixes", str(pre),
        "--output", str(out),
    )  # fmt: skip
    assert written.returncode == 0, written.stderr
    assert out.read_text(encoding="utf-8").splitlines() == printed.stdout.splitlines()
    for line, prefix in zip(printed.stdout.splitlines(), PREFIXES):
        assert line.startswith(prefix)


def test_prefix_mistakes_are_one_line_errors(checkpoint, tmp_path, here):
    src, pre = tmp_path / "in.de", tmp_path / "prefixes.en"
    src.write_text("\n".join(SOURCES) + "\n", encoding="utf-8")
    pre.write_text("only one\n", encoding="utf-8")
    ck = ["translate", "--checkpoint", checkpoint]
    assert_user_error(here(*ck, "--input", str(src), "--prefixes", str(pre)), "1 lines", "has 3")
    assert_user_error(
        here(*ck, "--prefixes", str(pre), "Hallo"), "--prefixes FILE goes with --input"
    )
    assert_user_error(
        here(*ck, "--prefix", "a", "--prefixes", str(pre), "--input", str(src)), "not both"
    )
    assert_user_error(here(*ck, "--prefix", "a " * 2000, "Hallo"), "output limit")


def test_every_translation_holds_the_required_phrases(checkpoint, tmp_path, here):
    done = here("translate", "--checkpoint", checkpoint, "--beam", "3", "--constraint", "red ball",
                "--constraint", "dog", *SOURCES)  # fmt: skip
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert len(lines) == 3 and all("red ball" in line and "dog" in line for line in lines), lines
    src, terms, musts = tmp_path / "in.de", tmp_path / "terms.tsv", tmp_path / "musts.en"
    src.write_text("\n".join(SOURCES) + "\n", encoding="utf-8")
    terms.write_text("Katzen\tkittens\nMann\tgentleman\n", encoding="utf-8")
    musts.write_text("blue\n\nsky\tsea\n", encoding="utf-8")
    out = tmp_path / "out.en"
    done = here("translate", "--checkpoint", checkpoint, "--beam", "4", "--input", str(src),
                "--terms", str(terms), "--constraints", str(musts), "--output", str(out))  # fmt: skip
    assert done.returncode == 0, done.stderr
    first, second, third = out.read_text(encoding="utf-8").splitlines()
    assert "blue" in first and "kittens" not in first
    assert "kittens" in second
    assert "gentleman" in third and "sky" in third and "sea" in third


def test_constraint_mistakes_are_one_line_errors(checkpoint, tmp_path, here):
    ck = ["translate", "--checkpoint", checkpoint]
    assert_user_error(here(*ck, "--constraint", " ", "Hallo"), "--constraint", "holds no text")
    assert_user_error(here(*ck, "--beam", "2", "--constraint", "a", "--constraint", "b", "Hallo"),
                      "2 constraints need a beam of at least 3 (beam is 2")  # fmt: skip
    assert_user_error(
        here(*ck, "--beam", "3", "--constraint", "a " * 1100, "Hallo"), "output limit"
    )
    terms = tmp_path / "terms.tsv"
    terms.write_text("Hund\tdog\nKatze\n", encoding="utf-8")
    assert_user_error(here(*ck, "--terms", str(terms), "Hallo"), f"{terms}:2:")
    folder = tmp_path / "ct2"
    assert here("export", "--checkpoint", checkpoint, "--output", str(folder)).returncode == 0
    exported = ["translate", "--checkpoint", str(folder), "--beam", "3"]
    assert_user_error(here(*exported, "--constraint", "dog", "Hallo"), "cannot require phrases")
    done = here(*exported, "--prefix", "A dog", "Hallo")
    assert done.returncode == 0 and done.stdout.startswith("A dog"), done.stderr


def test_eval_reports_how_many_required_phrases_the_translations_hold(checkpoint, tmp_path, here):
    src, ref, musts = tmp_path / "s.de", tmp_path / "r.en", tmp_path / "m.en"
    src.write_text("\n".join(SOURCES) + "\n", encoding="utf-8")
    ref.write_text("A dog runs.\nTwo cats play in the garden.\nA man reads.\n", encoding="utf-8")
    musts.write_text("dog\n\ngarden\treads\n", encoding="utf-8")
    ev = ["eval", "--checkpoint", checkpoint, "--src", str(src), "--ref", str(ref), "--beam", "3"]
    done = here(*ev, "--constraints", str(musts), "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["constraints"] == {"given": 3, "honoured": 3}
    done = here(*ev, "--constraints", str(musts))
    assert "constraints honoured: 3 of 3 (100.0%)" in done.stdout
    musts.write_text("dog\n", encoding="utf-8")
    assert_user_error(here(*ev, "--constraints", str(musts)), "1 lines", "3 sentences")
