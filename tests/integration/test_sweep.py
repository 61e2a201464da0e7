"""scripts/bench/sweep.py: every combination trains, is ranked on dev, and is not trained twice."""

import json
from pathlib import Path

import yaml
from project import load_sweep
from util import tiny_config


def test_a_sweep_trains_each_combination_once_and_ranks_them(tmp_path, monkeypatch, capsys):
    """Four runs two at a time, side by side: they split the cores and keep their logs."""
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setattr("os.cpu_count", lambda: 4)
    config = tmp_path / "tiny.yaml"
    config.write_text(yaml.safe_dump(tiny_config(train={"max_steps": 3, "valid_every": 3})))
    sweep = load_sweep()
    out, runs = tmp_path / "sweep.jsonl", tmp_path / "runs"
    argv = ["--config", str(config), "--steps", "3", "--runs", str(runs), "--out", str(out)]
    argv += ["--grid", "train.lr_schedule=inverse_sqrt,linear", "--grid", "train.lr=0.002"]
    argv += ["--seeds", "1,2", "--jobs", "2"]
    sweep.main(argv)
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(rows) == 4 and {r["seed"] for r in rows} == {1, 2}
    for row in rows:
        summary = json.loads((Path(row["run_dir"]) / "summary.json").read_text())
        assert summary["steps"] == 3 and row["dev_bleu"] == summary["best_dev_bleu"]
        saved = yaml.safe_load((Path(row["run_dir"]) / "config.yaml").read_text())
        assert saved["train"]["lr_schedule"] == row["settings"]["train.lr_schedule"]
        assert float(saved["train"]["lr"]) == float(row["settings"]["train.lr"])
        assert saved["seed"] == row["seed"]
        assert saved["train"]["threads"] == 2  # 4 cores, 2 jobs
        log = runs / (Path(row["run_dir"]).name + ".log")
        assert "parameters" in log.read_text()
    table = capsys.readouterr().out.split("| settings")[1].splitlines()
    means = [float(line.split("|")[3]) for line in table[2:]]
    assert len(means) == 2 and means == sorted(means, reverse=True)

    stamps = {r["run_dir"]: (Path(r["run_dir"]) / "summary.json").stat().st_mtime for r in rows}
    sweep.main(argv)  # the runs exist: read again, not retrained
    for run_dir, stamp in stamps.items():
        assert (Path(run_dir) / "summary.json").stat().st_mtime == stamp
    assert len(out.read_text().splitlines()) == 8
