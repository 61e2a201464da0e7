"""The training loop's guards: out-of-memory retries, non-finite losses, the lr schedule."""

import pytest
import torch
from util import tiny_config

from translator import train as train_mod
from translator.config import config_from_dict
from translator.errors import UserError
from translator.train import Trainer, inverse_sqrt_lr

TINY = tiny_config(seed=5, train={"max_steps": 4, "batch_tokens": 600, "warmup_steps": 2})


def trainer(tmp_path, name):
    return Trainer(config_from_dict({**TINY, "run_dir": str(tmp_path / name)}))


def test_out_of_memory_splits_the_batch_and_gives_the_same_update(tmp_path, monkeypatch):
    plain = trainer(tmp_path, "plain")
    plain.bad_in_a_row = 0
    plain.train_step()

    real = train_mod.sequence_loss
    rows = plain.batches.collate(plain.batches.epoch(0)[0]).src.size(0)
    calls = []

    def small_memory(model, batch, smoothing):
        calls.append(batch.src.size(0))
        if batch.src.size(0) > (rows + 1) // 2:
            raise torch.OutOfMemoryError("CUDA out of memory (simulated)")
        return real(model, batch, smoothing)

    monkeypatch.setattr(train_mod, "sequence_loss", small_memory)
    split = trainer(tmp_path, "split")
    split.bad_in_a_row = 0
    loss, tokens = split.train_step()
    assert calls[0] == rows and max(calls[1:]) <= (rows + 1) // 2 and len(calls) >= 3
    assert tokens > 0 and split.state.step == 1
    # the gradients of the step (still in .grad) are those of the unsplit batch
    for a, b in zip(plain.model.parameters(), split.model.parameters(), strict=True):
        assert torch.allclose(a.grad, b.grad, rtol=1e-4, atol=1e-7)


def test_out_of_memory_that_splitting_cannot_fix_names_the_setting(tmp_path, monkeypatch):
    def no_memory(model, batch, smoothing):
        raise RuntimeError("DefaultCPUAllocator: can't allocate memory: you tried to allocate")

    monkeypatch.setattr(train_mod, "sequence_loss", no_memory)
    t = trainer(tmp_path, "oom")
    t.bad_in_a_row = 0
    with pytest.raises(UserError) as err:
        t.train_step()
    assert "train.batch_tokens" in str(err.value)


def test_other_runtime_errors_are_not_mistaken_for_out_of_memory(tmp_path, monkeypatch):
    def broken(model, batch, smoothing):
        raise RuntimeError("shape mismatch")

    monkeypatch.setattr(train_mod, "sequence_loss", broken)
    t = trainer(tmp_path, "bug")
    t.bad_in_a_row = 0
    with pytest.raises(RuntimeError, match="shape mismatch"):
        t.train_step()


def test_non_finite_losses_are_skipped_then_stop_training(tmp_path, monkeypatch):
    t = trainer(tmp_path, "nan")
    t.bad_in_a_row = 0
    before = [p.detach().clone() for p in t.model.parameters()]
    real = train_mod.sequence_loss
    monkeypatch.setattr(train_mod, "sequence_loss", lambda m, b, s: real(m, b, s) * float("nan"))
    monkeypatch.setattr(train_mod, "MAX_BAD_STEPS", 3)
    for _ in range(2):
        loss, tokens = t.train_step()
        assert tokens == 0 and loss != loss  # NaN
    assert t.state.step == 0 and t.state.skipped_steps == 2
    assert all(torch.equal(a, b) for a, b in zip(before, t.model.parameters(), strict=True))
    with pytest.raises(UserError) as err:
        t.train_step()
    assert "non-finite" in str(err.value) and "train.lr" in str(err.value)


def test_inverse_sqrt_schedule():
    assert inverse_sqrt_lr(50, 1e-3, 100) == pytest.approx(5e-4)
    assert inverse_sqrt_lr(100, 1e-3, 100) == pytest.approx(1e-3)
    assert inverse_sqrt_lr(400, 1e-3, 100) == pytest.approx(5e-4)
    assert inverse_sqrt_lr(7, 1e-3, 0) == 1e-3
