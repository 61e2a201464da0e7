"""train.tensorboard: the scalars RUN/tensorboard/ holds, read back with tensorboard's own
reader, and the one-line hint when the package is missing."""

import json
import math
import sys

import pytest
from util import tiny_config, user_error

from translator.config import config_from_dict
from translator.train.schedule import inverse_sqrt_lr
from translator.train.trainer import Trainer

BOARD = tiny_config(
    seed=2, train={"max_steps": 6, "log_every": 2, "valid_every": 3, "tensorboard": True}
)


def test_the_event_file_holds_the_logged_scalars(tmp_path):
    reader = pytest.importorskip(
        "tensorboard.backend.event_processing.event_accumulator",
        reason="tensorboard is not installed (the `tensorboard` extra; make install has it)",
    )
    run_dir = tmp_path / "run"
    Trainer(config_from_dict({**BOARD, "run_dir": str(run_dir)})).run()
    events = reader.EventAccumulator(str(run_dir / "tensorboard"))
    events.Reload()
    tags = set(events.Tags()["scalars"])
    assert {"train/loss", "train/lr", "train/grad_norm", "train/tokens_per_s"} <= tags
    assert {"dev/loss", "dev/bleu"} <= tags

    def series(tag):
        return {e.step: e.value for e in events.Scalars(tag)}

    summary = json.loads((run_dir / "summary.json").read_text())
    assert series("train/loss") == pytest.approx(dict(summary["losses"]), abs=1e-4)
    tc = BOARD["train"]
    lr = {s: inverse_sqrt_lr(s, tc["lr"], tc["warmup_steps"]) for s in (2, 4, 6)}
    assert series("train/lr") == pytest.approx(lr, rel=1e-6)
    assert series("train/grad_norm").keys() == lr.keys()
    assert all(math.isfinite(v) and v > 0 for v in series("train/grad_norm").values())
    assert all(v > 0 for v in series("train/tokens_per_s").values())
    dev = summary["validations"]
    assert series("dev/bleu") == pytest.approx({v["step"]: v["dev_bleu"] for v in dev}, abs=1e-4)
    assert series("dev/loss") == pytest.approx({v["step"]: v["dev_loss"] for v in dev}, rel=1e-5)
    assert sorted(series("dev/loss")) == [3, 6]


def test_a_missing_tensorboard_names_the_extra(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "tensorboard", None)  # import tensorboard now fails
    monkeypatch.setitem(sys.modules, "torch.utils.tensorboard", None)
    cfg = config_from_dict({**BOARD, "run_dir": str(tmp_path / "run")})
    message = user_error(Trainer, cfg)
    assert 'pip install "translator[tensorboard]"' in message and "train.tensorboard" in message
    assert not (tmp_path / "run").exists()  # refused before anything was written
