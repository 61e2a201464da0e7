"""Terminology (translate --terms): source terms found on whole words make their target
terms required phrases; a bad line of the file is an error naming file:line."""

import pytest

from translator.decode.line_guides import LineGuides, Terms
from translator.errors import UserError


def test_terms_are_found_on_whole_words_longest_first():
    terms = Terms([("Kläranlage", "sewage treatment plant"), ("Anlage", "facility"),
                   ("Hund", "dog"), ("alte Hund", "old dog")])  # fmt: skip
    assert terms.found("Die Kläranlage und die Anlage.") == ["sewage treatment plant", "facility"]
    assert terms.found("Der alte Hund, der Hund.") == ["old dog", "dog"]
    assert terms.found("Hunde und hund") == []  # neither a longer word nor another case
    assert Terms([("hund", "dog")], ignore_case=True).found("Der HUND") == ["dog"]


def test_a_bad_line_names_the_file_and_line(tmp_path):
    path = tmp_path / "terms.tsv"
    path.write_text("# comment\nHund\tdog\n\nKatze cat\n", encoding="utf-8")
    with pytest.raises(UserError, match=r"terms.tsv:4: expected 'source term<TAB>target term'"):
        Terms.read(path)
    path.write_text("Hund\tdog\nKatze\t \n", encoding="utf-8")
    with pytest.raises(UserError, match=r"terms.tsv:2:"):
        Terms.read(path)
    path.write_text("Hund\tdog\n", encoding="utf-8")
    assert Terms.read(path).found("Ein Hund.") == ["dog"]


def test_every_line_gets_its_phrases_from_options_files_and_terms(tmp_path):
    given = tmp_path / "c.txt"
    given.write_text("red\tball\n\n", encoding="utf-8")
    guides = LineGuides(constraints=["a"], constraint_file=given, terms=Terms([("Hund", "dog")]))
    take = guides.reader()
    prefixes, phrases = take(["Ein Hund.", "Eine Katze."])
    assert prefixes is None and phrases == [["a", "red", "ball", "dog"], ["a"]]
    assert not LineGuides() and LineGuides(prefix="x")
    assert LineGuides(prefix="x").reader()(["a", "b"]) == (["x", "x"], None)


def test_ignoring_case_without_a_glossary_is_refused_not_ignored(tmp_path):
    with pytest.raises(UserError, match=r"^--terms-ignore-case goes with --terms"):
        Terms.option(None, ignore_case=True)
    assert Terms.option(None, ignore_case=False) is None
    path = tmp_path / "terms.tsv"
    path.write_text("Hund\tdog\n", encoding="utf-8")
    assert Terms.option(path, ignore_case=True).found("Ein HUND.") == ["dog"]
