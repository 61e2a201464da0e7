"""train.dropout_after_epochs (late dropout): no dropout anywhere in the model for the first
N epochs, then the rates it was built with, and the same on resume."""

import pytest
import torch
from util import family_config, tiny_config

from translator.config import config_from_dict
from translator.models.family import build_model
from translator.train.trainer import Trainer

FAMILIES = ["transformer", "luong", "bahdanau", "lstm"]


def noisy_model(family: str):
    sizes = dict(d_model=32, heads=4, enc_layers=2, dec_layers=2, ff_dim=64, embed_dim=24)
    cfg = family_config(family, hidden_size=32, dropout=0.5, attention_dropout=0.5, **sizes)
    return build_model(cfg, 30, 30, True).train()


def two_passes_agree(model) -> bool:
    src = torch.randint(4, 30, (3, 7))
    tgt = torch.randint(4, 30, (3, 6))
    return torch.equal(model(src, tgt), model(src, tgt))


@pytest.mark.parametrize("family", FAMILIES)
def test_paused_dropout_makes_training_mode_deterministic_and_resumes_at_the_built_rates(family):
    torch.manual_seed(0)
    model = noisy_model(family)
    assert not two_passes_agree(model)
    model.pause_dropout(True)
    assert two_passes_agree(model)
    model.pause_dropout(False)
    rates = {round(rate, 3) for _, _, rate in model._dropout_rates}
    assert 0.5 in rates and not two_passes_agree(model)


def rates_per_step(run_dir, *overrides, resume=False):
    """(epoch of the batch, the model's largest dropout rate) at each step's batch."""
    cfg = tiny_config(model={"dropout": 0.3}, train={"max_steps": 6, "batch_tokens": 3000})
    trainer = Trainer(
        config_from_dict({**cfg, "run_dir": str(run_dir)}, overrides=list(overrides)), resume=resume
    )
    seen, take = [], trainer._next_batches

    def recording():
        rate = max(m.p for m in trainer.model.modules() if isinstance(m, torch.nn.Dropout))
        seen.append((trainer.state.epoch, rate))
        return take()

    trainer._next_batches = recording
    trainer.run()
    return seen


def test_dropout_starts_with_the_first_batch_of_epoch_n_and_stays_on_after_a_resume(tmp_path):
    seen = rates_per_step(tmp_path / "run", "train.dropout_after_epochs=1")
    epochs = [e for e, _ in seen]
    assert epochs[0] == 0 and epochs[-1] >= 1, "the run must cross into a second epoch"
    assert all(rate == (0.3 if epoch >= 1 else 0.0) for epoch, rate in seen), seen
    after = rates_per_step(
        tmp_path / "run", "train.dropout_after_epochs=1", "train.max_steps=8", resume=True
    )
    assert len(after) == 2 and all(rate == 0.3 for _, rate in after), after


def test_without_the_key_dropout_is_on_from_the_first_step(tmp_path):
    seen = rates_per_step(tmp_path / "run")
    assert seen and all(rate == 0.3 for _, rate in seen)
