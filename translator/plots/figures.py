"""Pictures: attention heatmaps, BLEU by sentence length and training curves (matplotlib,
no screen needed). Each figure is laid out by matplotlib's constrained layout and written
whole (atomically), so no title or label is cut off."""

from __future__ import annotations

import io
import textwrap
from pathlib import Path

from translator.errors import optional_import

WORD_START = "\u2581"  # sentencepiece's mark of a piece that begins a word
CONTINUES = "\u00b7"  # our mark of a piece that continues the word before it
LEGEND_COLUMNS = 32  # characters a line of a legend beside the axes holds


def _pyplot():
    matplotlib = optional_import("matplotlib", "plot", "plots")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _save(fig, path: str) -> None:
    """Write `fig` in the format its file's suffix names (.svg, .pdf; .png else)."""
    from translator.fileio import atomic_write_bytes

    buffer = io.BytesIO()
    suffix = Path(path).suffix.lower().lstrip(".")
    fig.savefig(buffer, format=suffix if suffix in ("svg", "pdf") else "png", dpi=120)
    _pyplot().close(fig)
    atomic_write_bytes(path, buffer.getvalue())


def piece_labels(pieces: list[str]) -> list[str]:
    """Tick labels for sentencepiece pieces: the word mark '▁' dropped, and a piece that
    continues a word (no mark) led by '·', so "▁ihre m" reads "ihre ·m". Punctuation and
    special tokens ("</s>", "<0xC3>") stay as they are; a lone '▁' (a space the vocabulary
    could not join to the next piece) shows as '␣', and the piece after it starts a word."""
    labels, after_space = [], True
    for piece in pieces:
        if piece == WORD_START:
            labels.append("\u2423")
            after_space = True
            continue
        starts = after_space or piece.startswith(WORD_START)
        text = piece.removeprefix(WORD_START)
        labels.append(text if starts or not text[:1].isalnum() else CONTINUES + text)
        after_space = False
    return labels


def legend_names(models: list[tuple[str, list]]) -> list[str]:
    """A name for each (model type, checkpoint paths) of a picture: the family as a person
    reads it ("Transformer"; "Ensemble" for several checkpoints), with the run (the folder of
    the checkpoint) added where two would read the same, and the paths where even that does."""
    from translator.models.family import title

    def run(path) -> str:
        path = Path(path)
        return path.name if path.is_dir() else path.resolve().parent.name

    def joined(detail, paths) -> str:
        return " + ".join(detail(p) for p in paths)

    base = [title(kind) if len(paths) == 1 else "Ensemble" for kind, paths in models]
    runs = [f"{b} ({joined(run, paths)})" for b, (_, paths) in zip(base, models)]
    full = [f"{b} ({joined(str, paths)})" for b, (_, paths) in zip(base, models)]
    return [
        b if base.count(b) == 1 and len(paths) == 1 else r if runs.count(r) == 1 else f
        for b, r, f, (_, paths) in zip(base, runs, full, models)
    ]


def plot_by_length(series: list[tuple[str, list, list[dict]]], path: str) -> None:
    """One line per model, (model type, checkpoint paths, rows of evaluate.by_length) each:
    BLEU against source-length bucket, the legend naming the models (legend_names)."""
    _save(by_length_figure(series), path)


def by_length_figure(series: list[tuple[str, list, list[dict]]]):
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(7, 4.2), layout="constrained")
    names = legend_names([(kind, paths) for kind, paths, _ in series])
    # wrapped: a label of long paths beside the axes would leave them no width at all
    names = [textwrap.fill(name, LEGEND_COLUMNS) for name in names]
    for name, (_, _, rows) in zip(names, series):
        ax.plot([r["bucket"] for r in rows], [r["bleu"] for r in rows], marker="o", label=name)
    ax.set_xlabel("source sentence length (words)")
    ax.set_ylabel("BLEU")
    ax.grid(alpha=0.3)
    fig.legend(loc="outside right upper")  # beside the axes: the lines cross anywhere inside
    return fig


def plot_attention(source: list[str], target: list[str], weights, path: str, title: str) -> None:
    """Heatmap of attention weights, one row per target piece and one column per source
    piece (sentencepiece pieces, labelled by piece_labels), with its colour scale."""
    _save(attention_figure(source, target, weights, title), path)


def attention_figure(source: list[str], target: list[str], weights, title: str):
    plt = _pyplot()
    height = max(3.5, 0.3 * len(target) + 2.5)
    width = max(5.0, 0.3 * len(source) + 3.0)
    fig, ax = plt.subplots(figsize=(width, height), layout="constrained")
    image = ax.imshow(weights, cmap="Blues", vmin=0.0, vmax=1.0, aspect="auto")
    fig.colorbar(image, ax=ax, label="attention weight", shrink=0.8)
    ax.set_xticks(range(len(source)), piece_labels(source), rotation=90)
    ax.set_yticks(range(len(target)), piece_labels(target))
    ax.set_xlabel("source")
    ax.set_ylabel("translation")
    # Wrapped to the figure's width: a long sentence makes more lines, never a cut title.
    columns = max(20, int(width * 72 / 6.5))
    lines = [textwrap.fill(line, columns) for line in title.split("\n")]
    fig.suptitle("\n".join(lines), fontsize=10)
    return fig


def plot_curves(series: list[tuple], path: str, estimated_minutes: bool) -> None:
    """Training runs side by side: (name, minutes, dev BLEU, [(step, loss)]) each; dev BLEU
    against wall-clock minutes on the left, training loss against steps on the right."""
    _save(curves_figure(series, estimated_minutes), path)


def curves_figure(series: list[tuple], estimated_minutes: bool):
    plt = _pyplot()
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4.2), layout="constrained")
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
    return fig
