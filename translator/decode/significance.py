"""Paired significance tests of systems against a baseline (`translator eval --significance`):
sacreBLEU's paired bootstrap resampling or approximate randomization, as `sacrebleu
--paired-bs` / `--paired-ar` runs them, for BLEU, chrF and TER."""

from __future__ import annotations

TESTS = {"bs": "paired bootstrap resampling", "ar": "paired approximate randomization"}
SAMPLES = {"bs": "resamples", "ar": "trials"}
LABELS = {"bleu": "BLEU", "chrf": "chrF", "ter": "TER"}
THRESHOLD = 0.05  # sacreBLEU's: a p-value under it is marked significant


def paired_tests(
    systems: list[tuple[str, list[str]]],
    references: list[list[str]],
    test: str,
    samples: int | None = None,
    progress: bool = True,
) -> list[dict]:
    """Each of `systems` ((name, hypotheses), the first the baseline) scored against the
    `references` (lists as long as the hypotheses) by sacreBLEU's PairedTest of kind `test`
    (bs or ar) with `samples` resamples or trials (None: sacreBLEU's default): a dict per
    system, in order, of the test's settings and, per metric, the score, the bootstrap mean
    and 95% confidence interval (bs) and the p-value against the baseline (not the baseline's).
    sacreBLEU seeds its generator with SACREBLEU_SEED (12345 unless set), as the signatures say.
    """
    from sacrebleu.metrics import BLEU, CHRF, TER
    from sacrebleu.significance import PairedTest

    from translator.progress import progress_bar

    metrics = {"bleu": BLEU, "chrf": CHRF, "ter": TER}
    tables = [
        {"test": test, "baseline": systems[0][0], "samples": None, "signatures": {}}
        for _ in systems
    ]
    # One PairedTest per metric, for a progress step each; sacreBLEU reseeds per metric
    # and per system, so the results are those of one PairedTest of all three.
    with progress_bar(desc="significance", unit="metric", total=len(metrics)) as bar:
        for key, metric in metrics.items():
            paired = PairedTest(systems, {key: metric()}, references, test, samples or 0)
            signatures, scores = paired()
            (results,) = (v for k, v in scores.items() if k != "System")
            (signature,) = signatures.values()
            base = results[0].score
            for table, result in zip(tables, results):
                table["samples"] = paired.n_samples
                table["signatures"][key] = str(signature)
                table[key] = _row(result, base)
            bar.update(1)
    return tables


def _row(result, baseline_score: float) -> dict:
    """One metric's figures for one system, plain floats for JSON."""
    row = {"score": float(result.score)}
    if result.mean is not None:
        row["mean"], row["ci"] = float(result.mean), float(result.ci)
    if result.p_value is not None:
        p = float(result.p_value)
        # sacreBLEU counts only resampled differences strictly above the observed one, so
        # where every resample ties with it at 0 (the same translations, or a score of 0 for
        # both), it returns its smallest p-value; a difference of nothing is not significant.
        if result.score == baseline_score:
            p = 1.0
        row["p_value"], row["significant"] = p, p < THRESHOLD
    return row


def report_lines(tables: list[dict], names: list[str]) -> list[str]:
    """The plain-text report of paired_tests' `tables` for the systems `names`, its figures
    formatted as sacreBLEU prints them: score (mean ± 95% CI) (p = P), a * when P < 0.05."""
    first = tables[0]
    test, samples = first["test"], first["samples"]
    head = f"== significance: {TESTS[test]}, {samples} {SAMPLES[test]}, against the baseline"
    figures = [[_figure(table[key]) for key in LABELS] for table in tables]
    width = max(len(f) for row in figures for f in row)
    lines = [head]
    for i, (name, table, row) in enumerate(zip(names, tables, figures)):
        lines.append(f"baseline: {name}" if i == 0 else name)
        for key, label, figure in zip(LABELS, LABELS.values(), row):
            p = table[key].get("p_value")
            mark = "" if p is None else f"  (p = {p:.4f})" + "*" * table[key]["significant"]
            lines.append(f"  {label:<5} {figure:<{width}}{mark}".rstrip())
    lines += [
        f"* p < {THRESHOLD}: the difference from the baseline is unlikely to be chance;",
        "  the test says that two systems differ, not which one is better",
    ]
    lines += [f"{label} signature: {first['signatures'][k]}" for k, label in LABELS.items()]
    return lines


def _figure(row: dict) -> str:
    """A metric's score, and the bootstrap mean and 95% CI where measured, as sacreBLEU."""
    text = f"{row['score']:6.2f}"
    return text + (f" ({row['mean']:.2f} ± {row['ci']:.2f})" if "mean" in row else "")
