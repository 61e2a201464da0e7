"""Checkpoints the tests make: freshly initialised ones (what an export, a quantization or a
server does with the weights does not depend on training), one of a few training steps,
and the mark for tests that need CTranslate2."""

from __future__ import annotations

from pathlib import Path

import pytest
from util import tiny_config

try:
    import ctranslate2  # noqa: F401

    HAVE_CT2 = True
except ImportError:
    HAVE_CT2 = False
needs_ct2 = pytest.mark.skipif(
    not HAVE_CT2,
    reason="ctranslate2 is not installed (the `ctranslate2` extra; make install has it)",
)

# Trained enough (a minute on 2 busy cores) that its outputs are words of varied length,
# not a constant: agreement on such outputs says something.
DEMO = tiny_config(
    seed=5,
    data={"demo_train": 600, "demo_dev": 10, "demo_test": 100},
    tokenizer={"vocab_size": 500},
    model={"d_model": 64, "ff_dim": 128, "enc_layers": 2, "dec_layers": 2},
    train={"max_steps": 100, "batch_tokens": 1000, "lr": 0.005, "warmup_steps": 30, "threads": 2},
    decode={"beam": 5, "max_len_a": 1.5, "max_len_b": 5, "len_penalty": 0.6},
)


def agreement(a: list, b: list) -> float:
    """The share of sentences whose best hypotheses have the same tokens."""
    return sum(x[0].tokens == y[0].tokens for x, y in zip(a, b)) / len(a)


def untrained(tmp_path: Path, joint: bool = True, **model) -> Path:
    """A checkpoint of a freshly initialised model (what an export or a quantization does
    with the weights does not depend on training)."""
    import torch

    from translator.config import config_from_dict
    from translator.data.corpus import load_split
    from translator.data.tokenizer import Tokenizer
    from translator.models.checkpoint import Checkpoint
    from translator.models.family import build_model

    raw = tiny_config(model=model, tokenizer={"joint": joint}, run_dir=str(tmp_path / "run"))
    if model.get("type", "transformer") != "transformer":
        for key in ("d_model", "heads", "ff_dim"):
            raw["model"].pop(key)
    cfg = config_from_dict(raw)
    tokenizer = Tokenizer.train(load_split(cfg.data, "train", cfg.seed), cfg.tokenizer, cfg.seed)
    torch.manual_seed(0)
    net = build_model(cfg.model, tokenizer.src_vocab_size, tokenizer.tgt_vocab_size, joint)
    path = tmp_path / "init.pt"
    Checkpoint(config=cfg.to_dict(), tokenizer=tokenizer.state(), model=net.state_dict()).save(path)
    return path


def multilingual_checkpoint(path, directions: list[str] | None = None) -> str:
    """A checkpoint of a freshly initialised small Transformer (no training), with
    data.directions and their language tags in the vocabulary when given."""
    import torch

    from translator.config import config_from_dict
    from translator.data.demo import demo_splits
    from translator.data.tokenizer import Tokenizer
    from translator.models.checkpoint import Checkpoint
    from translator.models.family import build_model

    data = {"dir": str(path.parent / "unread"), "directions": directions} if directions else {}
    cfg = config_from_dict(tiny_config(data=data, decode={"beam": 2, "max_len_b": 4}))
    pairs = demo_splits(200, 10, 10, 1)["train"]
    tokenizer = Tokenizer.train(pairs, cfg.tokenizer, 1, symbols=cfg.data.tags)
    torch.manual_seed(0)
    model = build_model(
        cfg.model, tokenizer.src_vocab_size, tokenizer.tgt_vocab_size, tokenizer.joint
    )
    weights = model.state_dict()
    Checkpoint(config=cfg.to_dict(), tokenizer=tokenizer.state(), model=weights).save(path)
    return str(path)


def trained_checkpoint(root):
    """A checkpoint of a few training steps of the tiny config, under `root`."""
    from translator.config import config_from_dict
    from translator.train.trainer import Trainer

    cfg = config_from_dict(tiny_config(run_dir=str(root / "run"), train={"max_steps": 2}))
    Trainer(cfg).run()
    return root / "run" / "best.pt"


# A child process that writes a 16 MB checkpoint to argv[1] over and over until it is killed,
# printing each write's number once it is done, so that a kill can land in a write.
WRITER = """
import sys, torch
from translator.models.checkpoint import save_checkpoint
path = sys.argv[1]
i = 0
while True:
    i += 1
    save_checkpoint(path, {"model": {"w": torch.full((4_000_000,), float(i))}, "n": i})
    print(i, flush=True)
"""
