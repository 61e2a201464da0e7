"""results/README.md indexes results/: a row for every file there and none for a missing one,
and README.md and docs/ cite results files by their exact names, never by a pattern."""

import re

from util import ROOT

RESULTS = ROOT / "results"
INDEX = RESULTS / "README.md"
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
# a results/ name as the docs write it, up to the end of its code span or sentence
CITED = re.compile(r"results/([^\s`'\")\];]+)")
PATTERN = set("*?[]{}")


def rows() -> list[str]:
    """The file names of the index's table, in order."""
    return re.findall(r"^\| `([^`]+)` \|", INDEX.read_text(encoding="utf-8"), flags=re.M)


def cited_by() -> dict[str, str]:
    """Each row's file name and its "cited by" column."""
    text = INDEX.read_text(encoding="utf-8")
    return dict(re.findall(r"^\| `([^`]+)` \|.*\| ([^|]*) \|$", text, flags=re.M))


def not_kept() -> set[str]:
    """Names the index lists as written by a command in the docs but not kept."""
    text = INDEX.read_text(encoding="utf-8").split("## Named in the docs, not kept", 1)
    return set(re.findall(r"^- `([^`]+)`", text[1], flags=re.M)) if len(text) == 2 else set()


def citations() -> list[tuple[str, str]]:
    """(doc, name) for every results/ name in README.md and docs/."""
    out = []
    for doc in DOCS:
        for match in CITED.finditer(doc.read_text(encoding="utf-8")):
            out.append((doc.relative_to(ROOT).as_posix(), match.group(1).rstrip(".,:")))
    return out


def test_every_results_file_has_one_row_and_every_row_a_file():
    files = sorted(p.name for p in RESULTS.iterdir() if p.is_file() and p != INDEX)
    named = rows()
    assert len(named) == len(set(named)), "a file has two rows"
    assert sorted(named) == files


def test_the_docs_cite_results_files_by_exact_existing_names():
    cited = citations()
    assert cited, "no citations found: the pattern no longer matches the docs"
    globs = [(doc, name) for doc, name in cited if PATTERN & set(name)]
    assert not globs, globs
    known = {p.name for p in RESULTS.iterdir()} | not_kept()
    missing = [(doc, name) for doc, name in cited if name not in known]
    assert not missing, missing
    assert not not_kept() & {p.name for p in RESULTS.iterdir()}, "a kept file is listed as not"


def test_each_row_names_the_docs_that_cite_its_file():
    docs: dict[str, set[str]] = {}
    for doc, name in citations():
        docs.setdefault(name, set()).add(doc)
    for name, column in cited_by().items():
        assert column == (", ".join(sorted(docs.get(name, ()))) or "none"), name


def test_the_citation_pattern_sees_a_glob_and_the_end_of_a_name():
    text = "(`results/a_{b,c}.*.json`; `results/d.jsonl`). See results/e.json, results/f.tsv."
    assert CITED.findall(text) == ["a_{b,c}.*.json", "d.jsonl", "e.json,", "f.tsv."]
