"""translator curves: training runs side by side from their summary.json files."""

import json

from training import summary

from translator.plots.curves import read_summary
from translator.train.run_dir import summary_file


def test_curves_of_a_run_folder_and_a_summary_file(tmp_path, here):
    (tmp_path / "run_a").mkdir()
    (tmp_path / "run_a" / "summary.json").write_text(json.dumps(summary()))
    (tmp_path / "b.summary.json").write_text(json.dumps(summary(losses=False)))
    plot = tmp_path / "curves.png"
    result = here(
        "curves", str(tmp_path / "run_a"), str(tmp_path / "b.summary.json"), "--plot", str(plot)
    )
    assert result.returncode == 0, result.stderr
    assert plot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "2 runs" in result.stderr and "no training losses in b" in result.stderr
    run = tmp_path / "run_a"
    assert summary_file(run) == run / "summary.json"
    assert read_summary(run, summary_file(run))[0] == "run_a"
