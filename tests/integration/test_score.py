"""`translator score` as a user runs it: one line per pair, TSV or JSON, written whole, the
same numbers as the engine's, and a one-line error for files that are not aligned."""

import json
import math

import pytest
from util import assert_user_error, tiny_config

from translator.config import config_from_dict
from translator.engines.load import load_engine
from translator.train.trainer import Trainer

SOURCES = ["Ein Hund läuft.", "", "Zwei Katzen spielen im Garten."]
TARGETS = ["A dog runs.", "Nothing here.", "Two cats play in the garden."]


@pytest.fixture(scope="module")
def checkpoint(three_steps):
    return three_steps


def files(tmp_path, sources, targets):
    src, tgt = tmp_path / "pairs.de", tmp_path / "pairs.en"
    src.write_text("".join(s + "\n" for s in sources), encoding="utf-8")
    tgt.write_text("".join(t + "\n" for t in targets), encoding="utf-8")
    return str(src), str(tgt)


def test_score_prints_one_line_per_pair_as_the_engine_scores_it(checkpoint, tmp_path, here):
    src, tgt = files(tmp_path, SOURCES, TARGETS)
    result = here("score", "--checkpoint", str(checkpoint), "--src", src, "--tgt", tgt)
    assert result.returncode == 0, result.stderr
    rows = [line.split("\t") for line in result.stdout.splitlines()]
    want = load_engine(checkpoint, "cpu").score(SOURCES, TARGETS)
    assert len(rows) == len(want)
    for (logprob, mean, tokens), score in zip(rows, want):
        assert float(logprob) == pytest.approx(score.logprob, abs=1e-4)
        assert float(mean) == pytest.approx(score.mean, abs=1e-4)
        assert int(tokens) == score.tokens
    out = tmp_path / "scores.jsonl"
    args = ["--src", src, "--tgt", tgt, "--json", "--output", str(out), "--batch-size", "1"]
    result = here("score", "--checkpoint", str(checkpoint), *args)
    assert result.returncode == 0 and result.stdout == "", result.stderr
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert [d["tokens"] for d in lines] == [s.tokens for s in want]
    assert all(d["logprob"] == pytest.approx(s.logprob, abs=1e-4) for d, s in zip(lines, want))


def test_files_of_different_lengths_are_one_line_and_write_nothing(checkpoint, tmp_path, here):
    src, tgt = files(tmp_path, SOURCES, TARGETS[:2])
    out = tmp_path / "scores.tsv"
    args = ["--src", src, "--tgt", tgt, "--output", str(out)]
    result = here("score", "--checkpoint", str(checkpoint), *args)
    assert_user_error(result, "pairs.de", "pairs.en")
    assert not out.exists()


def test_filter_keeps_the_best_share_with_one_model_or_two(checkpoint, tmp_path, here):
    sources = SOURCES * 4
    targets = TARGETS[1:] + TARGETS[:1] + TARGETS * 3  # the first three pairs misaligned
    src, tgt = files(tmp_path, sources, targets)
    root = tmp_path / "reverse"
    raw = tiny_config(
        run_dir=str(root), train={"max_steps": 3}, data={"src_lang": "en", "tgt_lang": "de"}
    )
    Trainer(config_from_dict(raw)).run()
    outs = {"--out-src": tmp_path / "kept.de", "--out-tgt": tmp_path / "kept.en"}
    args = ["--src", src, "--tgt", tgt, *[str(x) for kv in outs.items() for x in kv]]
    for extra in ([], ["--reverse", str(root / "last.pt")]):
        scores = tmp_path / "scores.txt"
        result = here("filter", "--checkpoint", str(checkpoint), *args, "--keep", "0.75",
                      "--scores", str(scores), *extra)  # fmt: skip
        assert result.returncode == 0, result.stderr
        assert "kept 9 of 12 pairs" in result.stderr
        values = [float(v) for v in scores.read_text().split()]
        assert len(values) == 12 and all(0 < v <= 1 for v in values)
        kept_src = outs["--out-src"].read_text(encoding="utf-8").splitlines()
        kept_tgt = outs["--out-tgt"].read_text(encoding="utf-8").splitlines()
        pairs = list(zip(sources, targets))
        best = sorted(range(12), key=lambda i: -values[i])[:9]
        assert list(zip(kept_src, kept_tgt)) == [pairs[i] for i in sorted(best)]
    # the reverse model must translate the other way
    wrong = here("filter", "--checkpoint", str(checkpoint), *args, "--keep", "0.5",
                 "--reverse", str(checkpoint))  # fmt: skip
    assert_user_error(wrong, "--reverse", "en->de")
    # and it is refused before any scoring: files that scoring would refuse are not read
    short = tmp_path / "short.en"
    short.write_text("one line\n", encoding="utf-8")
    early = here("filter", "--checkpoint", str(checkpoint), "--src", args[1], "--tgt", str(short),
                 *args[4:], "--keep", "0.5", "--reverse", str(checkpoint))  # fmt: skip
    assert_user_error(early, "--reverse", "en->de")
    both = here("filter", "--checkpoint", str(checkpoint), *args, "--keep", "0.5",
                "--min-score", "0.1")  # fmt: skip
    assert_user_error(both, "--keep")
    for score, kept in (("2", "no pair"), ("-0.5", "every pair")):  # outside 0 to 1
        assert_user_error(here("filter", "--checkpoint", str(checkpoint), *args, "--min-score",
                               score), f"--min-score {float(score)}", kept)  # fmt: skip


def test_contrast_scores_how_much_likelier_the_source_makes_the_target(checkpoint, tmp_path, here):
    src, tgt = files(tmp_path, SOURCES, TARGETS)
    scores = tmp_path / "scores.txt"
    outs = ["--out-src", str(tmp_path / "k.de"), "--out-tgt", str(tmp_path / "k.en")]
    args = ["filter", "--checkpoint", str(checkpoint), "--src", src, "--tgt", tgt, *outs]
    result = here(*args, "--keep", "0.5", "--contrast", "--scores", str(scores))
    assert result.returncode == 0, result.stderr
    engine = load_engine(checkpoint, "cpu")
    given = engine.score(SOURCES, TARGETS)
    alone = engine.score(["."] * len(TARGETS), TARGETS)
    want = [g.mean - a.mean for g, a in zip(given, alone)]
    got = [float(v) for v in scores.read_text().split()]
    assert got == pytest.approx(want, abs=1e-5)
    assert_user_error(here(*args, "--keep", "0.5", "--contrast", "--reverse", str(checkpoint)),
                      "not both")  # fmt: skip


def test_filter_scores_with_an_ensemble_and_its_scores_file_reproduces_each_decision(
    checkpoint, tmp_path, here
):
    other = tmp_path / "other"
    Trainer(config_from_dict(tiny_config(run_dir=str(other), train={"max_steps": 2}))).run()
    sources, targets = SOURCES * 4, TARGETS[1:] + TARGETS[:1] + TARGETS * 3
    src, tgt = files(tmp_path, sources, targets)
    scores = tmp_path / "scores.txt"
    outs = ["--out-src", str(tmp_path / "k.de"), "--out-tgt", str(tmp_path / "k.en")]
    models = ["--checkpoint", str(checkpoint), "--checkpoint", str(other / "last.pt")]
    args = ["filter", *models, "--ensemble", "--src", src, "--tgt", tgt, *outs]
    result = here(*args, "--keep", "0.45", "--scores", str(scores))
    assert result.returncode == 0, result.stderr
    assert "kept 5 of 12 pairs" in result.stderr  # (0.45 of 12 is 5.4)
    got = [float(v) for v in scores.read_text().split()]
    engine = load_engine([checkpoint, other / "last.pt"], "cpu", ensemble=True)
    assert got == pytest.approx([math.exp(s.mean) for s in engine.score(sources, targets)])
    # a score copied from the file as --min-score keeps its own pair and every better one
    threshold = scores.read_text().split()[3]
    result = here(*args, "--min-score", threshold)
    assert f"kept {sum(v >= float(threshold) for v in got)} of 12 pairs" in result.stderr
    result = here(*args, "--keep", "0.01")
    assert result.returncode == 0 and "--keep 0.01 kept no pair" in result.stderr


def test_the_best_share_is_rounded_half_up():
    from translator.commands.filter import kept

    scores = [0.1 * k for k in range(10)]
    assert [sum(kept(scores, share, None)) for share in (0.25, 0.35, 0.45, 0.55)] == [3, 4, 5, 6]
