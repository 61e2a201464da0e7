"""scripts/bench/tag_fixtures.py and bench_tags.py on a tiny checkpoint: every tag comes
back, every line well-formed, for each way of placing tags, and placement is judged by
eflomal on the model's own output."""

import gzip
import importlib.util
import json

import pytest
from util import ROOT

from translator.documents.html import translate_html

LINES = [
    "ein mann mit einem roten hut steht vor dem haus .",
    "zwei hunde laufen über das grüne gras .",
    "eine frau liest ein buch im park .",
    "kinder spielen am strand mit einem ball .",
    "ein alter mann sitzt auf einer bank .",
    "drei leute warten an der straße auf den bus .",
]


def script(name):
    spec = importlib.util.spec_from_file_location(name, ROOT / "scripts" / "bench" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_tags_survive_a_tiny_model_in_every_row(three_steps, tmp_path):
    source, refs = tmp_path / "src.de.gz", tmp_path / "ref.en"
    with gzip.open(source, "wt", encoding="utf-8") as f:
        f.write("\n".join(LINES) + "\n")
    refs.write_text(
        "\n".join(f"reference line {k} of the test set ." for k in range(len(LINES))) + "\n"
    )
    fixtures = tmp_path / "tags.jsonl"
    script("tag_fixtures").main(["--source", str(source), "--output", str(fixtures)])
    rows_in = [json.loads(line) for line in fixtures.read_text().splitlines()]
    assert [r["source"] for r in rows_in] == LINES and all(
        1 <= len(r["tags"]) <= 3 for r in rows_in
    )
    out = tmp_path / "bench.jsonl"
    args = ["--checkpoint", str(three_steps), "--fixtures", str(fixtures), "--references",
            str(refs), "--device", "cpu", "--output", str(out), "--reference-row"]  # fmt: skip
    rows = script("bench_tags").main(args)
    assert [json.loads(line) for line in out.read_text().splitlines()] == rows
    ways = [(r["checkpoint"] == "references", r["alignments"]) for r in rows]
    assert ways[:2] == [(True, "eflomal"), (True, "none")] and ways[-1] == (False, "none")
    assert rows[0]["bleu_tags_removed"] == 100.0 and len(rows) in (3, 4)
    tags = sum(len(r["tags"]) for r in rows_in)
    for row in rows:
        assert row["tags"] == tags and row["lines"] == len(LINES)
        assert row["tags_present_pct"] == 100.0 and row["well_formed_pct"] == 100.0
        assert row["judged"] + row["unjudged"] == tags
        assert 0 <= row["placement_pct"] <= 100
        assert isinstance(row["bleu_tags_removed"], float) and isinstance(
            row["bleu_untagged"], float
        )


def test_the_saved_fixtures_rebuild_and_come_back_whole(tmp_path):
    """results/tag_fixtures.jsonl is what the script writes from Multi30k, and an identity
    translation gives every tagged line back byte for byte."""
    saved = ROOT / "results" / "tag_fixtures.jsonl"
    source = ROOT.parent / "shared" / "data" / "multi30k" / "test_2016_flickr.de.gz"
    if not source.is_file():
        pytest.skip("the Multi30k files are not in ../shared/data/multi30k")
    rebuilt = tmp_path / "tags.jsonl"
    script("tag_fixtures").main(["--source", str(source), "--output", str(rebuilt)])
    assert rebuilt.read_bytes() == saved.read_bytes()
    rows = [json.loads(line) for line in saved.read_text(encoding="utf-8").splitlines()]
    doc = "".join(f"<p>{r['html']}</p>\n" for r in rows)
    same = lambda ss: [(s, [(i, i) for i in range(len(s.split()))]) for s in ss]  # noqa: E731
    assert translate_html(doc, same, "de") == doc


def test_placement_is_judged_on_the_aligned_words():
    bench = script("bench_tags")
    words, ranges, whole = bench.read_output('<p>a <b>b c</b> <a href="x">d</a></p>')
    assert words == ["a", "b", "c", "d"] and whole
    assert ranges == {"<b>": (1, 3), '<a href="x">': (3, 4)}
    links = [(0, 1), (1, 2), (2, 0)]  # source word 1 -> output words 2
    assert bench.placed_well((1, 2), (2, 3), links) is True
    assert bench.placed_well((1, 2), (1, 3), links) is False  # wraps a word beyond
    assert bench.placed_well((1, 2), (3, 4), links) is False
    assert bench.placed_well((3, 4), (0, 1), links) is None  # nothing aligned: not judged
    assert bench.read_output("<p>a <b>b</p>")[2] is False
