"""The repository's own files as the tests read them: scripts loaded as modules, README's
walkthrough, and the config keys the loader knows."""

from __future__ import annotations

import importlib.util
import re

from util import ROOT

from translator.config.base import Section


def load_sweep():
    """scripts/bench/sweep.py as a module."""
    spec = importlib.util.spec_from_file_location("sweep", ROOT / "scripts" / "bench" / "sweep.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def real_keys(obj, prefix: str = "") -> dict[str, object]:
    """Every key of a config object and its default, as the loader knows them."""
    out = {}
    for name in type(obj).model_fields:
        value = getattr(obj, name)
        if isinstance(value, Section):
            out.update(real_keys(value, f"{prefix}{name}."))
        else:
            out[prefix + name] = value
    return out


# -- README's "Train on your own data" ------------------------------------------------------------

SECTION = "## Train on your own data"
# what the walkthrough's config shrinks to: tiny sizes and a few steps
WALKTHROUGH_TINY = {
    "tokenizer": {"vocab_size": 500},
    "model": {"d_model": 32, "heads": 2, "enc_layers": 1, "dec_layers": 1, "ff_dim": 64},
    "train": {
        "max_steps": 60,
        "valid_every": 30,
        "save_every": 30,
        "batch_tokens": 1000,
        "warmup_steps": 20,
        "lr": 0.005,
        "threads": 1,
        "dtype": "fp32",
    },
    "decode": {"batch_size": 16},
}


def walkthrough_commands(readme: str) -> list[str]:
    """The commands of the section's ```sh blocks, continuation lines joined."""
    start = readme.index(SECTION)
    end = readme.find("\n## ", start + len(SECTION))
    section = readme[start : end if end >= 0 else None]
    blocks = re.findall(r"```sh\n(.*?)```", section, flags=re.S)
    commands = []
    for block in blocks:
        text = re.sub(r"\\\n\s*", "", block)
        commands += [line.strip() for line in text.splitlines() if line.strip()]
    return commands
