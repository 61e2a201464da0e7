"""translator.models.checkpoint.Checkpoint: the one owner of the payload layout, as training
writes it, as older versions wrote it, and as translating reads it."""

import random

import pytest
import torch
from util import tiny_config, user_error

from translator.config import config_from_dict
from translator.models.checkpoint import FORMAT, Checkpoint, load_checkpoint, save_checkpoint
from translator.train.trainer import Trainer


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    root = tmp_path_factory.mktemp("ckpt_object")
    cfg = config_from_dict(tiny_config(run_dir=str(root / "run"), train={"max_steps": 3}))
    trainer = Trainer(cfg)
    trainer.run()
    return root / "run", trainer


def rng_state(seed: int) -> dict:
    gen = torch.Generator().manual_seed(seed)
    return {"torch": gen.get_state(), "python": random.Random(seed).getstate()}


def test_fields_round_trip_through_the_file(tmp_path):
    ckpt = Checkpoint(
        config={"seed": 3, "train": {"betas": [0.9, 0.98]}},
        tokenizer={"src": b"model bytes", "tgt": None, "sha256": "abc"},
        model={"w": torch.randn(4, 3), "steps": torch.arange(5)},
        progress={"step": 7, "epoch": 1},
        rng=[rng_state(1), rng_state(2)],
        optimizer={"state": {0: {"exp_avg": torch.ones(2)}}, "param_groups": []},
        scaler={"scale": 1.0},
    )
    ckpt.save(tmp_path / "last.pt")
    back = Checkpoint.load(tmp_path / "last.pt")
    assert back.config == ckpt.config and back.tokenizer == ckpt.tokenizer
    assert back.progress == ckpt.progress and back.scaler == ckpt.scaler
    assert all(torch.equal(back.model[k], ckpt.model[k]) for k in ckpt.model)
    assert torch.equal(back.optimizer["state"][0]["exp_avg"], torch.ones(2))
    assert back.processes == 2 and len(back.rng) == 2
    for saved, loaded in zip(ckpt.rng, back.rng, strict=True):
        assert torch.equal(saved["torch"], loaded["torch"]) and saved["python"] == loaded["python"]
    # rank 0's state stays where single-process files always kept it
    raw = load_checkpoint(tmp_path / "last.pt")
    assert raw["format"] == FORMAT
    assert torch.equal(raw["train_state"]["rng"]["torch"], ckpt.rng[0]["torch"])


def test_a_file_in_the_layout_older_versions_wrote_still_loads(tmp_path):
    rng = rng_state(5)
    save_checkpoint(
        tmp_path / "old.pt",
        {
            "config": {"seed": 1},
            "tokenizer": {"src": b"x", "tgt": None},
            "model": {"w": torch.zeros(2)},
            "train_state": {
                "progress": {"step": 4},
                "rng": rng,
                "optimizer": {"state": {}, "param_groups": []},
                "scaler": {},
            },
        },
    )
    ckpt = Checkpoint.load(tmp_path / "old.pt")
    assert ckpt.progress == {"step": 4} and ckpt.optimizer == {"state": {}, "param_groups": []}
    assert len(ckpt.rng) == 1 and torch.equal(ckpt.rng[0]["torch"], rng["torch"])
    assert ckpt.processes is None  # that layout did not say how many processes trained


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
