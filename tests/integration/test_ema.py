"""train.ema_decay: the moving average of the weights, what validation scores and best.pt
holds, and an exact resume of the average."""

import pytest
import torch
from training import EMA
from util import user_error

import translator.train.trainer
from translator.config import config_from_dict
from translator.models.checkpoint import Checkpoint
from translator.train.trainer import Trainer


def configured(run_dir, *overrides):
    return config_from_dict({**EMA, "run_dir": str(run_dir)}, overrides=list(overrides))


def test_validation_scores_the_average_and_best_holds_it(tmp_path, monkeypatch):
    seen = []
    real = translator.train.trainer.validate

    def spy(model, *args):
        seen.append({k: v.clone() for k, v in model.state_dict().items()})
        return real(model, *args)

    monkeypatch.setattr(translator.train.trainer, "validate", spy)
    Trainer(configured(tmp_path / "run")).run()
    best = Checkpoint.load(tmp_path / "run" / "best.pt")
    last = Checkpoint.load(tmp_path / "run" / "last.pt")
    assert len(seen) == 1 and best.progress["step"] == last.progress["step"] == 4
    assert last.ema["updates"] == 4
    name = "src_embed.weight"
    for key, value in best.model.items():
        assert torch.equal(value, seen[0][key]), key
        if key in last.ema["weights"]:
            assert torch.equal(value, last.ema["weights"][key]), key
    assert not torch.equal(best.model[name], last.model[name])  # last.pt: the raw weights


def test_resume_restores_the_average_exactly(tmp_path):
    straight = tmp_path / "straight"
    Trainer(configured(straight, "train.max_steps=8")).run()
    halves = tmp_path / "halves"
    Trainer(configured(halves)).run()
    Trainer(configured(halves, "train.max_steps=8"), resume=True).run()
    a = Checkpoint.load(straight / "last.pt")
    b = Checkpoint.load(halves / "last.pt")
    assert a.ema["updates"] == b.ema["updates"] == 8
    for name, value in a.ema["weights"].items():
        assert torch.equal(value, b.ema["weights"][name]), name
    for name, value in a.model.items():
        assert torch.equal(value, b.model[name]), name


def test_the_decay_cannot_change_on_resume_and_must_be_below_one(tmp_path):
    Trainer(configured(tmp_path / "run", "train.max_steps=1")).run()
    message = user_error(Trainer, configured(tmp_path / "run", "train.ema_decay=0.99"), resume=True)
    assert "train.ema_decay (0.9 -> 0.99)" in message
    for bad in ("1.0", "-0.1"):
        message = user_error(configured, tmp_path / "x", f"train.ema_decay={bad}")
        assert "train.ema_decay" in message


@pytest.mark.parametrize("off", ["null", "0"])
def test_without_a_decay_there_is_no_average(tmp_path, off):
    trainer = Trainer(configured(tmp_path / "run", f"train.ema_decay={off}", "train.max_steps=1"))
    trainer.run()
    assert trainer.ema is None and Checkpoint.load(tmp_path / "run" / "last.pt").ema is None
