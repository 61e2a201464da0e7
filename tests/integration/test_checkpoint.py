"""translator.models.checkpoint.Checkpoint: the one owner of the payload layout, as training
writes it, as older versions wrote it, and as translating reads it."""

import pytest
import torch
from util import tiny_config, user_error

from translator.config import config_from_dict
from translator.models.checkpoint import Checkpoint
from translator.train.trainer import Trainer


def test_training_writes_last_and_best_through_the_object(run):
    run_dir, trainer = run
    last = Checkpoint.load(run_dir / "last.pt")
    assert last.progress["step"] == 3 and last.optimizer is not None
    assert last.processes == 1 and torch.equal(last.rng[0]["torch"], torch.get_rng_state())
    assert last.config == trainer.cfg.to_dict()
    best = Checkpoint.load(run_dir / "best.pt")
    assert best.optimizer is None and best.rng == [] and best.processes is None


def test_build_gives_the_trained_model(run):
    run_dir, trainer = run
    cfg, tokenizer, model = Checkpoint.load(run_dir / "last.pt").build("last.pt")
    assert cfg == trainer.cfg and tokenizer.fingerprint() == trainer.tokenizer.fingerprint()
    trained = trainer.model.state_dict()
    assert all(torch.equal(v, trained[k]) for k, v in model.state_dict().items())


def test_build_refuses_a_file_without_tokenizer_or_with_foreign_weights(run):
    run_dir, _ = run
    ckpt = Checkpoint.load(run_dir / "last.pt")
    no_tokenizer = Checkpoint(config=ckpt.config, tokenizer=None, model=ckpt.model)
    assert "has no tokenizer" in user_error(no_tokenizer.build, "x.pt")
    weights = {k: torch.zeros(1) for k in ckpt.model}
    foreign = Checkpoint(config=ckpt.config, tokenizer=ckpt.tokenizer, model=weights)
    message = user_error(foreign.build, "x.pt")
    assert message.startswith("x.pt: weights do not fit")


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    root = tmp_path_factory.mktemp("ckpt_object")
    cfg = config_from_dict(tiny_config(run_dir=str(root / "run"), train={"max_steps": 3}))
    trainer = Trainer(cfg)
    trainer.run()
    return root / "run", trainer
