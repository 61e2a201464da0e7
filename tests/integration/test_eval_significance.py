"""translator eval --significance: sacreBLEU's paired tests of each checkpoint against the
first, checked against sacreBLEU's own PairedTest of the same translations."""

import json
import re

import pytest
from sacrebleu.metrics import BLEU, CHRF, TER
from sacrebleu.significance import PairedTest
from util import assert_user_error

from translator.data.demo import demo_splits

# Greedy and short: the two small models' translations differ, quickly.
FAST = ["--device", "cpu", "--beam", "1", "--max-len-a", "1", "--max-len-b", "3"]
METRICS = {"bleu": BLEU, "chrf": CHRF, "ter": TER}


@pytest.fixture(scope="module")
def setup(transformer, lstm, tmp_path_factory):
    """(baseline checkpoint, other checkpoint, --src/--ref options, references, each model's
    translations as `translator eval --output` writes them)."""
    root = tmp_path_factory.mktemp("eval-significance")
    pairs = demo_splits(60, 10, 24, seed=1)["test"]
    (root / "test.de").write_text("".join(s + "\n" for s, _ in pairs), encoding="utf-8")
    (root / "test.en").write_text("".join(t + "\n" for _, t in pairs), encoding="utf-8")
    files = ["--src", str(root / "test.de"), "--ref", str(root / "test.en")]
    return transformer[0], lstm[0], files, [t for _, t in pairs], root


def _translations(here, checkpoint, files, path):
    result = here("eval", "--checkpoint", checkpoint, *files, *FAST, "--output", str(path))
    assert result.returncode == 0, result.stderr
    return path.read_text(encoding="utf-8").splitlines()


def _sacrebleu(systems, refs, test, samples):
    """sacreBLEU's PairedTest of the named systems: metric -> a Result per system."""
    metrics = {key: make() for key, make in METRICS.items()}
    _, scores = PairedTest(systems, metrics, [refs], test, samples)()
    return dict(zip(METRICS, (v for k, v in scores.items() if k != "System")))


def test_bootstrap_figures_are_sacrebleus_for_each_model_against_the_first(setup, here):
    base, other, files, refs, root = setup
    args = ["eval", "--checkpoint", base, "--checkpoint", other, *files, *FAST, "--json"]
    result = here(*args, "--significance", "bs", "--significance-samples", "300")
    assert result.returncode == 0, result.stderr
    rows = [json.loads(line) for line in result.stdout.splitlines()]
    assert [r["checkpoint"] for r in rows] == [base, other]
    hyps = [_translations(here, c, files, root / f"{i}.en") for i, c in enumerate((base, other))]
    assert hyps[0] != hyps[1]
    want = _sacrebleu([(base, hyps[0]), (other, hyps[1])], refs, "bs", 300)
    compared = 0
    for i, row in enumerate(rows):
        table = row["significance"]
        assert (table["test"], table["samples"], table["baseline"]) == ("bs", 300, base)
        for key in METRICS:
            got, expected = table[key], want[key][i]
            assert got["score"] == pytest.approx(expected.score, abs=1e-9), key
            assert got["mean"] == pytest.approx(float(expected.mean), abs=1e-6), key
            assert got["ci"] == pytest.approx(float(expected.ci), abs=1e-6), key
            assert round(got["score"], 2) == row[key]  # the score eval reports beside it
            assert "bs:300|seed:12345|" in table["signatures"][key]
            if i == 0:  # the baseline is tested against nothing
                assert "p_value" not in got and "significant" not in got
                continue
            if expected.score != want[key][0].score:  # (a tie is p = 1: the test below)
                assert got["p_value"] == pytest.approx(expected.p_value, abs=1e-12), key
                compared += 1
            assert got["significant"] == (got["p_value"] < 0.05), key
    assert compared > 0  # the two models' scores differ somewhere


def test_approximate_randomization_text_report_is_sacrebleus(setup, here):
    base, other, files, refs, root = setup
    args = ["eval", "--checkpoint", base, "--checkpoint", other, *files, *FAST]
    result = here(*args, "--significance", "ar", "--significance-samples", "2000")
    assert result.returncode == 0, result.stderr
    text = result.stdout
    assert "== significance: paired approximate randomization, 2000 trials" in text, text
    section = text[text.index("== significance") :].splitlines()
    assert section[1] == f"baseline: {base}" and section[5] == other, section
    hyps = [_translations(here, c, files, root / f"ar{i}.en") for i, c in enumerate((base, other))]
    want = _sacrebleu([(base, hyps[0]), (other, hyps[1])], refs, "ar", 2000)
    for line, (key, label) in zip(
        section[6:9], (("bleu", "BLEU"), ("chrf", "chrF"), ("ter", "TER"))
    ):
        expected = want[key][1]
        p = 1.0 if expected.score == want[key][0].score else expected.p_value
        mark = "*" if p < 0.05 else ""
        assert re.fullmatch(
            rf"  {label} +{expected.score:.2f} +\(p = {p:.4f}\){re.escape(mark)}", line
        )
    for line in section[2:5]:  # the baseline: its scores, no p-value, and no CI without bs
        assert "(p =" not in line and "±" not in line, line
    assert re.search(r"^BLEU signature: nrefs:1\|ar:2000\|seed:12345\|", text, re.M), text


def test_a_model_against_itself_is_not_significant(setup, here):
    base, _, files, _, _ = setup
    args = ["eval", "--checkpoint", base, "--checkpoint", base, *files, *FAST, "--json"]
    result = here(*args, "--significance", "bs", "--significance-samples", "200")
    assert result.returncode == 0, result.stderr
    _, row = [json.loads(line) for line in result.stdout.splitlines()]
    for key in METRICS:
        assert row["significance"][key]["p_value"] == 1.0, key
        assert row["significance"][key]["significant"] is False, key


@pytest.mark.parametrize(
    "options, needles",
    [
        (["--significance", "bs"], ["--significance", "two or more --checkpoint"]),
        (["--checkpoint", "SAME", "--ensemble", "--significance", "ar"], ["--ensemble"]),
        (["--checkpoint", "SAME", "--significance", "t-test"], ["--significance", "t-test"]),
        (["--checkpoint", "SAME", "--significance-samples", "10"], ["--significance"]),
        (["--checkpoint", "SAME", "--significance", "bs", "--significance-samples", "0"],
         ["--significance-samples", "0"]),
    ],
    ids=["one-checkpoint", "ensemble", "unknown-test", "samples-alone", "no-samples"],
)  # fmt: skip
def test_significance_misuse_is_one_line_error(three_steps, here, options, needles):
    base = str(three_steps)
    options = [base if option == "SAME" else option for option in options]
    result = here("eval", "--checkpoint", base, *FAST, *options)
    assert_user_error(result, *needles)
    assert result.stdout == ""  # refused before any model decodes


@pytest.mark.parametrize("test", ["bs", "ar"])
def test_a_small_difference_is_not_significant(test):
    from translator.decode.significance import paired_tests

    pairs = demo_splits(60, 10, 30, seed=1)["test"]
    refs = [t for _, t in pairs]
    # as good as each other: each misses "the" in a different half of the sentences
    base, other = ([t.replace("the", "a") if i % 2 == k else t for i, t in enumerate(refs)]
                   for k in (0, 1))  # fmt: skip
    tables = paired_tests([("a", base), ("b", other)], [refs], test, 500, progress=False)
    want = _sacrebleu([("a", base), ("b", other)], refs, test, 500)
    for key in METRICS:
        p = want[key][1].p_value
        assert 0.05 < p < 1 and tables[1][key]["p_value"] == pytest.approx(p, abs=1e-12), key
        assert tables[1][key]["significant"] is False, key
