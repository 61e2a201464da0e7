"""The training loop's guards: out-of-memory retries, non-finite losses, the lr schedule."""

import pytest
from util import tiny_config

from translator.config import config_from_dict
from translator.train.schedule import inverse_sqrt_lr
from translator.train.trainer import Trainer

TINY = tiny_config(seed=5, train={"max_steps": 4, "batch_tokens": 600, "warmup_steps": 2})


def trainer(tmp_path, name):
    return Trainer(config_from_dict({**TINY, "run_dir": str(tmp_path / name)}))


def test_inverse_sqrt_schedule():
    assert inverse_sqrt_lr(50, 1e-3, 100) == pytest.approx(5e-4)
    assert inverse_sqrt_lr(100, 1e-3, 100) == pytest.approx(1e-3)
    assert inverse_sqrt_lr(400, 1e-3, 100) == pytest.approx(5e-4)
    assert inverse_sqrt_lr(7, 1e-3, 0) == 1e-3
