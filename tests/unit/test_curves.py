"""translator curves: training runs side by side from their summary.json files."""

import json

import pytest
from training import summary
from util import user_error

from translator.plots.curves import draw_curves, validation_minutes


def test_validation_minutes_recorded_or_estimated_from_the_rate():
    assert validation_minutes(summary(minutes=[3.0, 9.5])) == [3.0, 9.5]
    estimated = validation_minutes(summary())  # 0.1 min a step, then 1 min per validation
    assert estimated == pytest.approx([6.0, 12.0])
    assert estimated[-1] == pytest.approx(summary()["wall_minutes"])


@pytest.mark.parametrize(
    "content, needle",
    [
        (None, "no training summary"),
        ("{not json", "not a readable summary.json"),
        (json.dumps({"steps": 3}), "no validations"),
        (json.dumps({"validations": [{"step": 1}]}), "'dev_bleu'"),
        (json.dumps({"validations": [{"step": 1, "dev_bleu": 2.0}]}), "wall-clock"),
    ],
)
def test_a_missing_or_invalid_summary_is_a_one_line_error_naming_it(tmp_path, content, needle):
    path = tmp_path / "x.summary.json"
    if content is not None:
        path.write_text(content)
    message = user_error(draw_curves, [(path, path)], tmp_path / "c.png")
    assert str(path) in message and needle in message
    assert not (tmp_path / "c.png").exists()


def test_without_matplotlib_curves_name_the_plot_extra(tmp_path, monkeypatch):
    import sys

    (tmp_path / "s.json").write_text(json.dumps(summary()))
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import matplotlib now fails
    path = tmp_path / "s.json"
    message = user_error(draw_curves, [(path, path)], tmp_path / "c.png")
    assert 'pip install "translator[plot]"' in message


def test_a_run_without_a_summary_is_drawn_from_its_validations(tmp_path):
    """A run still training, or killed, has validations.jsonl and no summary.json: its
    curve comes from the record (a last line cut off by the kill left out)."""
    pytest.importorskip("matplotlib")
    run = tmp_path / "run"
    run.mkdir()
    lines = [json.dumps({"step": s, "dev_bleu": b, "minutes": m})
             for s, b, m in [(10, 1.0, 0.5), (20, 2.5, 1.0)]]  # fmt: skip
    (run / "validations.jsonl").write_text("\n".join(lines) + '\n{"step": 30, "dev_')
    said = draw_curves([(run, run / "summary.json")], tmp_path / "c.png")
    assert said == f"curves of 1 run written to {tmp_path / 'c.png'}; no training losses in run"
    assert (tmp_path / "c.png").stat().st_size > 0
    empty = tmp_path / "empty"
    empty.mkdir()
    assert "no training summary" in user_error(draw_curves, [(empty, empty / "summary.json")],
                                               tmp_path / "d.png")  # fmt: skip
