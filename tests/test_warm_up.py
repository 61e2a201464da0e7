"""The warm-up pass before the first step: the costliest batch the data can make runs
forward and backward, and nothing a run computes afterwards changes."""

import pytest
import torch
from util import tiny_config

from translator import update as update_mod
from translator.config import config_from_dict
from translator.errors import UserError
from translator.specials import EOS
from translator.train import Trainer
from translator.update import Updater

# with dropout, so that a random draw taken by the warm-up would change the run
CFG = tiny_config(seed=9, train={"max_steps": 4, "batch_tokens": 300, "warmup_steps": 2})
CFG["model"]["dropout"] = 0.1


def run(tmp_path, name, monkeypatch=None, warm=True):
    if not warm:
        monkeypatch.setattr(Updater, "warm_up", lambda self, batch: None)
    t = Trainer(config_from_dict({**CFG, "run_dir": str(tmp_path / name)}))
    t.run()
    if not warm:
        monkeypatch.undo()
    return t


def test_the_warm_up_changes_no_weight_and_no_random_draw(tmp_path, monkeypatch):
    cold = run(tmp_path, "cold", monkeypatch, warm=False)
    warm = run(tmp_path, "warm")
    assert cold.state.step == warm.state.step == 4
    for a, b in zip(cold.model.parameters(), warm.model.parameters(), strict=True):
        assert torch.equal(a, b)
    assert cold.state.losses == warm.state.losses


def test_the_warm_up_batch_is_the_longest_pair_at_the_budgets_row_count(tmp_path):
    t = Trainer(config_from_dict({**CFG, "run_dir": str(tmp_path / "t")}))
    batches = t.data.batches
    batch = batches.costliest(EOS)
    longest = int(batches.cost.max())
    assert batch.src.shape == batch.tgt_in.shape == (max(1, 300 // longest), longest)
    every = [batches.collate(b) for b in batches.epoch(0)]
    assert longest == max(max(b.src.size(1), b.tgt_out.size(1)) for b in every)
    assert all(b.src.numel() <= max(300, batch.src.numel()) for b in every)


def test_the_warm_up_leaves_no_gradient_and_a_clean_random_state(tmp_path):
    t = Trainer(config_from_dict({**CFG, "run_dir": str(tmp_path / "t")}))
    before = torch.get_rng_state()
    weights = [p.detach().clone() for p in t.model.parameters()]
    t.updater.warm_up(t.data.batches.costliest(EOS))
    assert torch.equal(before, torch.get_rng_state())
    assert all(p.grad is None for p in t.model.parameters())
    assert all(torch.equal(a, p) for a, p in zip(weights, t.model.parameters(), strict=True))


def test_a_warm_up_that_runs_out_of_memory_names_the_setting(tmp_path, monkeypatch):
    t = Trainer(config_from_dict({**CFG, "run_dir": str(tmp_path / "t")}))

    def no_memory(model, batch, smoothing):
        raise torch.OutOfMemoryError("CUDA out of memory (simulated)")

    monkeypatch.setattr(update_mod, "sequence_loss", no_memory)
    with pytest.raises(UserError, match="out of memory on the longest pairs.*batch_tokens=300"):
        t.updater.warm_up(t.data.batches.costliest(EOS))
