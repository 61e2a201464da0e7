"""scripts/bench/sweep.py: every combination trains, is ranked on dev, and is not trained twice."""

import pytest
from project import load_sweep


def test_grid_points_are_the_cartesian_product():
    sweep = load_sweep()
    points = sweep.grid_points(["train.lr=1,2", "train.lr_schedule=linear,cosine"])
    assert len(points) == 4
    assert {"train.lr": "2", "train.lr_schedule": "cosine"} in points


def test_side_by_side_runs_need_a_step_budget(tmp_path, capsys):
    sweep = load_sweep()
    with pytest.raises(SystemExit) as stop:
        sweep.main(["--config", "x.yaml", "--minutes", "1", "--jobs", "2", "--grid", "seed=1"])
    assert stop.value.code == 2
    assert "--jobs above 1 needs --steps" in capsys.readouterr().err
