"""`eval --plot-confidence`: each test sentence's confidence against its sentence chrF, one
colour per model, with how well the confidence ranks the sentences (Spearman)."""

from __future__ import annotations

from translator.plots.figures import _pyplot, _save, legend_names


def plot_confidence(series: list[tuple[str, list, dict, list]], path: str) -> None:
    """(model type, checkpoint paths, eval's confidence report, [(confidence, chrF / 100)])
    each: one scatter, the Spearman in the title (in the legend for several models)."""
    _save(confidence_figure(series), path)


def confidence_figure(series: list[tuple[str, list, dict, list]]):
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(6, 5), layout="constrained")
    names = legend_names([(kind, paths) for kind, paths, _, _ in series])
    for name, (_, _, report, points) in zip(names, series):
        x, y = zip(*points) if points else ((), ())
        label = f"{name}: Spearman {report['spearman']:.3f}"
        ax.scatter(x, y, s=8, alpha=0.4, label=label)
    calibrated = all(report["calibrated"] for _, _, report, _ in series)
    ax.set_xlabel(
        "confidence (predicted chrF / 100)"
        if calibrated
        else "confidence (uncalibrated: exp(mean log-probability))"
    )
    ax.set_ylabel("sentence chrF / 100")
    ax.set_xlim(-0.02, 1.02)
    ax.set_ylim(-0.02, 1.02)
    if calibrated:  # where a calibrated confidence would lie if it predicted chrF exactly
        ax.plot([0, 1], [0, 1], linestyle="--", color="grey", linewidth=1)
    ax.grid(alpha=0.3)
    if len(series) == 1:
        ax.set_title(f"Confidence against sentence chrF: Spearman {series[0][2]['spearman']:.3f}")
    else:
        ax.set_title("Confidence against sentence chrF")
        ax.legend(loc="best", fontsize=8)
    return fig
