"""Helpers shared by the test modules."""

import os
import subprocess
import sys

import pytest

from translator.errors import UserError


def user_error(fn, *args, **kwargs) -> str:
    """Call fn, require a UserError with a one-line message and return that message."""
    with pytest.raises(UserError) as excinfo:
        fn(*args, **kwargs)
    message = str(excinfo.value)
    assert message.strip(), "empty error message"
    assert "\n" not in message and "\r" not in message, message
    assert "\x1b" not in message, message  # no terminal colour codes
    return message


def family_config(family: str, **sizes):
    """The typed model section of `family` from sizes shared by tests of several families:
    keys that this family does not have are left out."""
    import dataclasses

    from translator.models import family as families

    own = {f.name for f in dataclasses.fields(families.config_class(family))}
    return families.model_config(family, **{k: v for k, v in sizes.items() if k in own})


def tiny_config(**changes) -> dict:
    """A training config that runs in seconds on the demo corpus.

    Each keyword names a top-level key; a dict value updates that section's keys.
    """
    cfg = {
        "seed": 1,
        "data": {"dataset": "demo", "demo_train": 60, "demo_dev": 10, "demo_test": 10},
        "tokenizer": {"vocab_size": 400},
        "model": {
            "d_model": 32,
            "heads": 2,
            "enc_layers": 1,
            "dec_layers": 1,
            "ff_dim": 64,
            "dropout": 0.0,
        },
        "train": {
            "max_steps": 12,
            "batch_tokens": 400,
            "lr": 0.003,
            "warmup_steps": 4,
            "valid_every": 1000,
            "save_every": 1000,
            "dtype": "fp32",
            "threads": 1,
        },
        "decode": {"beam": 2, "max_len_b": 5, "max_len_a": 1.0},
    }
    for key, value in changes.items():
        cfg[key] = {**cfg[key], **value} if isinstance(value, dict) else value
    return cfg


def cli(*args, stdin=None, env_extra=None, timeout=600):
    """Run the real `translator` command in a subprocess, offline."""
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", **(env_extra or {})}
    return subprocess.run(
        [sys.executable, "-m", "translator", *args],
        input=stdin,
        capture_output=True,
        text=True,
        env=env,
        timeout=timeout,
    )
