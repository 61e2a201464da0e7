"""The pictures: readable labels, a colour scale, legends that name the models, and no text
cut off at the figure's edge (asserted on the figure's artists, not on pixels)."""

import numpy as np
import pytest

pytest.importorskip("matplotlib", reason="the `plot` extra is not installed")

from translator.plots.figures import (  # noqa: E402
    attention_figure,
    by_length_figure,
    curves_figure,
    legend_names,
    piece_labels,
    plot_attention,
)

ROWS = [{"bucket": "1-5", "bleu": 20.0, "n": 5}, {"bucket": "6-10", "bleu": 30.0, "n": 5}]


def drawn_whole(fig) -> bool:
    """Whether everything drawn (titles, labels, ticks, legends) lies within the figure."""
    fig.canvas.draw()
    drawn, page = fig.get_tightbbox(fig.canvas.get_renderer()), fig.bbox_inches
    slack = 0.01  # inches: rounding of text extents
    return (
        drawn.x0 >= page.x0 - slack
        and drawn.y0 >= page.y0 - slack
        and drawn.x1 <= page.x1 + slack
        and drawn.y1 <= page.y1 + slack
    )


def test_piece_labels_drop_the_word_mark_and_mark_pieces_that_continue_a_word():
    pieces = ["▁Ein", "▁ihre", "m", "▁Park", ".", "▁", "the", "▁T", "-", "Shirt", "</s>"]
    assert piece_labels(pieces) == [
        "Ein", "ihre", "·m", "Park", ".", "␣", "the", "T", "-", "·Shirt", "</s>"
    ]  # fmt: skip
    assert piece_labels(["am", "▁Tag"]) == ["am", "Tag"]  # the first piece starts a word


def test_the_attention_heatmap_has_a_colour_scale_clean_labels_and_a_whole_title():
    source, target = ["▁Ein", "▁Hund", "chen", "▁läuft", ".", "</s>"], ["▁A", "▁puppy", "</s>"]
    weights = np.full((len(target), len(source)), 1 / len(source))
    long = "A dog that runs through the park and past the lake on a very sunny day " * 3
    fig = attention_figure(source, target, weights, f"Transformer (layer 2)\nde: x\nen: {long}")
    heatmap, scale = fig.axes
    assert scale.get_label() == "<colorbar>" and scale.get_ylabel() == "attention weight"
    labels = [t.get_text() for t in heatmap.get_xticklabels()]
    assert labels == ["Ein", "Hund", "·chen", "läuft", ".", "</s>"]
    assert [t.get_text() for t in heatmap.get_yticklabels()] == ["A", "puppy", "</s>"]
    title = fig.get_suptitle()
    assert title.replace("\n", " ").split() == f"Transformer (layer 2) de: x en: {long}".split()
    assert title.count("\n") > 3  # the long translation is wrapped onto several lines
    assert drawn_whole(fig)


def test_plot_attention_writes_a_png(tmp_path):
    path = tmp_path / "a.png"
    plot_attention(["▁a", "</s>"], ["▁b", "</s>"], np.eye(2), str(path), "Luong RNN")
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert [p.name for p in tmp_path.iterdir()] == ["a.png"]  # no temporary file left


def test_legend_names_are_the_families_and_the_runs_only_where_needed(tmp_path):
    one_each = [("transformer", ["runs/t/best.pt"]), ("bahdanau", ["runs/b/best.pt"])]
    assert legend_names(one_each) == ["Transformer", "Bahdanau RNN"]
    two = [("transformer", ["runs/w120/best.pt"]), ("transformer", ["runs/w240/best.pt"])]
    assert legend_names([*two, ("luong", ["runs/l/best.pt"])]) == [
        "Transformer (w120)",
        "Transformer (w240)",
        "Luong RNN",
    ]
    same_run = [("lstm", ["r/best.pt"]), ("lstm", ["r/last.pt"])]
    assert legend_names(same_run) == ["Sutskever LSTM (r/best.pt)", "Sutskever LSTM (r/last.pt)"]
    (tmp_path / "exported").mkdir()  # an exported model is a folder: named by itself
    ensemble = ("transformer", ["a/best.pt", "b/best.pt"])
    assert legend_names([ensemble, ("transformer", [tmp_path / "exported"])]) == [
        "Ensemble (a + b)",
        "Transformer",
    ]


def test_the_by_length_legend_names_the_models():
    series = [("transformer", ["runs/x/best.pt"], ROWS), ("luong", ["runs/y/best.pt"], ROWS)]
    fig = by_length_figure(series)
    legend = [t.get_text() for t in fig.legends[0].get_texts()]
    assert legend == ["Transformer", "Luong RNN"]
    assert drawn_whole(fig)


def test_a_legend_of_long_paths_leaves_the_axes_their_width():
    """Two checkpoints of runs with the same folder name are told apart by their paths."""
    import warnings

    paths = [f"/home/someone/experiments/{n}/runs/transformer/best.pt" for n in ("one", "two")]
    series = [("transformer", [path], ROWS) for path in paths]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # matplotlib warns where the layout collapses
        fig = by_length_figure(series)
        fig.canvas.draw()
    legend = [t.get_text().replace("\n", "") for t in fig.legends[0].get_texts()]
    assert legend == [f"Transformer ({path})" for path in paths]
    assert fig.axes[0].get_position().width > 0.4 and drawn_whole(fig)


def test_the_curves_keep_every_label_inside_the_picture():
    runs = [
        (name, [1.0, 2.0], [10.0, 20.0], [(1, 5.0), (2, 4.0)])
        for name in ("multi30k_transformer_lr0.003", "multi30k_bahdanau_with_a_long_name")
    ]
    fig = curves_figure(runs, estimated_minutes=True)
    legend = [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    assert legend == [name for name, *_ in runs]
    assert drawn_whole(fig)
