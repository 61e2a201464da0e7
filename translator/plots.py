"""Pictures: attention heatmaps, BLEU by sentence length and training curves (matplotlib,
no screen needed)."""

from __future__ import annotations

from translator.errors import optional_import


def _pyplot():
    matplotlib = optional_import("matplotlib", "plot", "plots")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def plot_by_length(series: dict[str, list[dict]], path: str) -> None:
    """One line per model: BLEU against source-length bucket."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(7, 4.2))
    for name, rows in series.items():
        ax.plot([r["bucket"] for r in rows], [r["bleu"] for r in rows], marker="o", label=name)
    ax.set_xlabel("source sentence length (words)")
    ax.set_ylabel("BLEU")
    ax.grid(alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def plot_attention(source: list[str], target: list[str], weights, path: str, title: str) -> None:
    """Heatmap of attention weights: one row per target subword, one column per source one."""
    plt = _pyplot()
    height = max(3.0, 0.32 * len(target) + 1.5)
    width = max(4.0, 0.32 * len(source) + 2.0)
    fig, ax = plt.subplots(figsize=(width, height))
    ax.imshow(weights, cmap="Greys", vmin=0.0, vmax=1.0, aspect="auto")
    ax.set_xticks(range(len(source)), source, rotation=90)
    ax.set_yticks(range(len(target)), target)
    ax.set_xlabel("source")
    ax.set_ylabel("translation")
    ax.set_title(title, fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def plot_curves(series: list[tuple], path: str, estimated_minutes: bool) -> None:
    """Training runs side by side: (name, minutes, dev BLEU, [(step, loss)]) each; dev BLEU
    against wall-clock minutes on the left, training loss against steps on the right."""
    plt = _pyplot()
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4.2))
    for name, minutes, bleu, losses in series:
        (line,) = left.plot(minutes, bleu, marker="o", markersize=3, label=name)
        if losses:
            right.plot(*zip(*losses), color=line.get_color(), label=name)
    left.set_xlabel(
        "wall-clock minutes" + (" (estimated from the rate)" if estimated_minutes else "")
    )
    left.set_ylabel("dev BLEU")
    right.set_xlabel("training step")
    right.set_ylabel("training loss")
    for ax in (left, right):
        ax.grid(alpha=0.3)
    left.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
