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


def test_curves_draw_in_the_format_the_suffix_names(tmp_path, here):
    (tmp_path / "s.summary.json").write_text(json.dumps(summary()))
    runs = [str(tmp_path / "s.summary.json"), "--plot"]
    assert here("curves", *runs, str(tmp_path / "c.svg")).returncode == 0
    assert b"<svg" in (tmp_path / "c.svg").read_bytes()[:500]
    assert here("curves", *runs, str(tmp_path / "c.PDF")).returncode == 0
    assert (tmp_path / "c.PDF").read_bytes()[:5] == b"%PDF-"
    result = here("curves", *runs, str(tmp_path / "c.txt"))
    assert result.returncode == 2 and "c.txt is not named as a picture" in result.stderr
    assert "Traceback" not in result.stderr and not (tmp_path / "c.txt").exists()
