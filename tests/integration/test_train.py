"""The training loop's guards: out-of-memory retries, non-finite losses, the lr schedule."""

import time

import pytest
import torch
from training import tiny_trainer as trainer
from util import tiny_config

from translator.config import config_from_dict
from translator.errors import UserError
from translator.train import loss as loss_mod
from translator.train import report as report_mod
from translator.train.trainer import Trainer


def test_out_of_memory_splits_the_batch_and_gives_the_same_update(tmp_path, monkeypatch, caplog):
    plain = trainer(tmp_path, "plain")
    plain.train_step()

    real = loss_mod.sequence_loss
    rows = plain.data.batches.collate(plain.data.batches.epoch(0)[0]).src.size(0)
    calls = []

    def small_memory(model, batch, smoothing, loss):
        calls.append(batch.src.size(0))
        if batch.src.size(0) > (rows + 1) // 2:
            raise torch.OutOfMemoryError("CUDA out of memory (simulated)")
        return real(model, batch, smoothing, loss)

    monkeypatch.setattr(loss_mod, "sequence_loss", small_memory)
    split = trainer(tmp_path, "split")
    with caplog.at_level("WARNING", logger="translator.train.update"):
        tokens = split.train_step()
    assert "out of memory with batches of up to" in caplog.text  # logged, so train.log has it
    assert calls[0] == rows and max(calls[1:]) <= (rows + 1) // 2 and len(calls) >= 3
    assert tokens > 0 and split.state.step == 1
    # the gradients of the step (still in .grad) are those of the unsplit batch
    for a, b in zip(plain.model.parameters(), split.model.parameters(), strict=True):
        assert torch.allclose(a.grad, b.grad, rtol=1e-4, atol=1e-7)


def test_out_of_memory_that_splitting_cannot_fix_names_the_setting(tmp_path, monkeypatch):
    def no_memory(model, batch, smoothing, loss):
        raise RuntimeError("DefaultCPUAllocator: can't allocate memory: you tried to allocate")

    monkeypatch.setattr(loss_mod, "sequence_loss", no_memory)
    t = trainer(tmp_path, "oom")
    with pytest.raises(UserError) as err:
        t.train_step()
    assert "train.batch_tokens" in str(err.value)


def test_other_runtime_errors_are_not_mistaken_for_out_of_memory(tmp_path, monkeypatch):
    def broken(model, batch, smoothing, loss):
        raise RuntimeError("shape mismatch")

    monkeypatch.setattr(loss_mod, "sequence_loss", broken)
    t = trainer(tmp_path, "bug")
    with pytest.raises(RuntimeError, match="shape mismatch"):
        t.train_step()


def test_non_finite_losses_are_skipped_then_stop_training(tmp_path, monkeypatch):
    t = trainer(tmp_path, "nan")
    before = [p.detach().clone() for p in t.model.parameters()]
    real = loss_mod.sequence_loss
    monkeypatch.setattr(
        loss_mod, "sequence_loss", lambda m, b, s, f: real(m, b, s, f) * float("nan")
    )
    monkeypatch.setattr(report_mod, "MAX_BAD_STEPS", 3)
    for _ in range(2):
        assert t.train_step() > 0
    stats = t.sync()  # the guard runs on the device; sync() reads what it did
    assert stats.skipped == 2 and stats.loss != stats.loss  # no good step: NaN
    assert t.state.skipped_steps == 2
    assert all(torch.equal(a, b) for a, b in zip(before, t.model.parameters(), strict=True))
    assert not t.optimizer.state or all(
        float(st["exp_avg"].abs().sum()) == 0 for st in t.optimizer.state.values()
    )
    t.train_step()
    with pytest.raises(UserError) as err:
        t.sync()
    assert "non-finite" in str(err.value) and "train.lr" in str(err.value)


def test_an_infinite_loss_is_skipped_even_when_its_gradients_are_finite(tmp_path, monkeypatch):
    t = trainer(tmp_path, "inf")
    before = [p.detach().clone() for p in t.model.parameters()]
    real = loss_mod.sequence_loss
    # the forward value is +inf, the gradient that of the real loss
    monkeypatch.setattr(
        loss_mod,
        "sequence_loss",
        lambda m, b, s, f: (lambda x: x + (torch.inf - x).detach())(real(m, b, s, f)),
    )
    t.train_step()
    assert t.sync().skipped == 1
    assert all(torch.equal(a, b) for a, b in zip(before, t.model.parameters(), strict=True))


def test_good_steps_after_skipped_ones_train_and_are_logged(tmp_path, monkeypatch):
    t = trainer(tmp_path, "mixed")
    real = loss_mod.sequence_loss
    calls = []

    def every_other_nan(m, b, s, f):
        calls.append(1)
        return real(m, b, s, f) * (float("nan") if len(calls) % 2 else 1.0)

    monkeypatch.setattr(loss_mod, "sequence_loss", every_other_nan)
    before = [p.detach().clone() for p in t.model.parameters()]
    for _ in range(4):
        t.train_step()
    stats = t.sync()
    assert stats.skipped == 2 and stats.longest_bad_run == 1
    assert 0 < stats.loss < 20  # the mean of the two good steps
    assert stats.tokens > 0 and t.state.target_tokens == stats.tokens
    assert any(not torch.equal(a, b) for a, b in zip(before, t.model.parameters(), strict=True))


def test_a_training_step_never_reads_a_value_back_from_the_device(tmp_path, monkeypatch):
    """On a GPU each read is a host sync; on the CPU the same code must not read either."""
    t = trainer(tmp_path, "nosync")
    t.train_step()  # the first step builds the optimizer state

    def forbidden(*args, **kwargs):
        raise AssertionError("a tensor was read on the host during a training step")

    for name in ("item", "tolist", "__bool__", "__float__", "__int__", "__index__"):
        monkeypatch.setattr(torch.Tensor, name, forbidden)
    for _ in range(3):
        t.train_step()
    monkeypatch.undo()
    assert t.sync().skipped == 0 and t.state.step == 4


def test_fp16_scales_the_loss_and_skips_overflowing_steps(tmp_path, monkeypatch):
    cfg = tiny_config(seed=5, train={"max_steps": 4, "batch_tokens": 600, "dtype": "fp16"})
    t = Trainer(config_from_dict({**cfg, "run_dir": str(tmp_path / "fp16")}))
    assert t.dtype == torch.float16
    before = [p.detach().clone() for p in t.model.parameters()]
    scale = t.updater.scaler.get_scale()
    real = loss_mod.sequence_loss
    monkeypatch.setattr(loss_mod, "sequence_loss", lambda m, b, s, f: real(m, b, s, f) * 1e30)
    t.train_step()  # finite loss, but the scaled gradients overflow fp16
    assert t.updater.scaler.get_scale() == scale / 2
    assert all(torch.equal(a, b) for a, b in zip(before, t.model.parameters(), strict=True))
    assert t.sync(logged=True).skipped == 0  # an overflow lowers the scale, no bad loss
    monkeypatch.undo()
    for _ in range(3):
        t.train_step()
    stats = t.sync(logged=True)  # (the log line since the overflowing step)
    assert stats.skipped == 0 and 0 < stats.loss < 20
    assert any(not torch.equal(a, b) for a, b in zip(before, t.model.parameters(), strict=True))


@pytest.mark.parametrize("backend", ["eager", pytest.param("inductor", marks=pytest.mark.slow)])
def test_compiled_training_matches_eager(tmp_path, monkeypatch, backend):
    """train.compile: the same gradients and losses as eager mode, through the real loop.
    The eager backend checks what translator compiles and how it trains; inductor (which
    generates and builds kernels: a minute of the CPU with a cold cache) is in test-slow."""
    from translator.train import compiling

    symbolic = compiling._symbolic
    monkeypatch.setattr(compiling, "_symbolic", lambda net, _backend: symbolic(net, backend))
    runs = {}
    for compiled in (False, True):
        cfg = tiny_config(seed=5, train={"max_steps": 3, "batch_tokens": 600, "compile": compiled})
        t = Trainer(config_from_dict({**cfg, "run_dir": str(tmp_path / str(compiled))}))
        assert (t.net is not t.model) == compiled  # the compiled wrapper trains
        t.train_step()
        grads = [p.grad.clone() for p in t.model.parameters()]
        first = t.sync(logged=True).loss
        for _ in range(2):
            t.train_step()
        runs[compiled] = (first, t.sync(logged=True).loss, grads)
    assert runs[True][0] == pytest.approx(runs[False][0], rel=1e-5)
    assert runs[True][1] == pytest.approx(runs[False][1], rel=1e-3)
    for a, b in zip(runs[True][2], runs[False][2], strict=True):
        assert torch.allclose(a, b, rtol=1e-3, atol=1e-6)


def test_the_logged_rate_covers_every_step_since_the_last_log(tmp_path, monkeypatch):
    cfg = tiny_config(seed=5, train={"max_steps": 6, "batch_tokens": 600, "log_every": 3})
    t = Trainer(config_from_dict({**cfg, "run_dir": str(tmp_path / "rate")}))
    starts, ends, windows = [], [], []
    real_step, real_log = t.train_step, t._log

    def timed_step():
        starts.append(time.perf_counter())
        tokens = real_step()
        ends.append(time.perf_counter())
        return tokens

    def spy_log(bar, seconds):
        windows.append((t.state.step, seconds))
        return real_log(bar, seconds)

    monkeypatch.setattr(t, "train_step", timed_step)
    monkeypatch.setattr(t, "_log", spy_log)
    t.run()
    step, seconds = windows[-1]
    assert step == 6
    assert seconds >= ends[5] - starts[3]  # steps 4, 5 and 6, not the last one alone
