"""The registry of model families: `model.type` -> the module that holds the family.

A family is one module under translator/models/ that defines

    class XConfig(ModelConfig): ...     # its typed `model:` section (translator/config/base.py)
    class X(Seq2Seq): ...               # the model, on the interface of models/base.py
    FAMILY = Family("x", XConfig, X, "one line for listings")

and one line in MODULES below. Nothing outside translator/models/ names a family: the
config reads its section through `config_class`, training and inference build through
`build_model`, and everything else asks the model (models/base.py).

This module imports no torch, so reading a config stays cheap until a family is needed.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Any

from translator.config.base import ModelConfig

# model.type -> module; a new family is one new module and one line here.
MODULES = {
    "transformer": "translator.models.transformer",
    "lstm": "translator.models.sutskever",
    "bahdanau": "translator.models.bahdanau",
    "luong": "translator.models.luong",
}
DEFAULT = "transformer"


@dataclass(frozen=True)
class Family:
    name: str
    config: type  # a ModelConfig subclass
    model: type  # a Seq2Seq subclass, built as model(cfg, src_vocab, tgt_vocab, share_src_tgt)
    summary: str
    title: str = ""  # the family as a person reads it, for pictures ("Bahdanau RNN")


def names() -> tuple[str, ...]:
    return tuple(MODULES)


def family(name: str) -> Family:
    """The family registered as `name` (a KeyError for an unknown one)."""
    return importlib.import_module(MODULES[name]).FAMILY


def title(name: str) -> str:
    """The family `name` as a person reads it; an unknown or untitled one keeps its name."""
    return (family(name).title if name in MODULES else "") or name


def config_class(name: str) -> type:
    return family(name).config


def model_config(type: str = DEFAULT, **keys: Any) -> ModelConfig:
    """The typed `model:` section of family `type`, e.g. model_config("luong", hidden_size=8)."""
    return config_class(type)(type=type, **keys)


def all_keys() -> dict[str, list[str]]:
    """Every family's keys: key -> the families that have it."""
    out: dict[str, list[str]] = {}
    for name in names():
        for key in config_class(name).model_fields:
            out.setdefault(key, []).append(name)
    return out


def exporting(fmt: str) -> tuple[str, ...]:
    """The families whose models `translator export` can write in format `fmt`."""
    return tuple(n for n in names() if fmt in family(n).model.export_formats)


def build_model(cfg: ModelConfig, src_vocab: int, tgt_vocab: int, joint_vocab: bool):
    """The model of the family cfg.type, freshly initialised."""
    return family(cfg.type).model(cfg, src_vocab, tgt_vocab, share_src_tgt=joint_vocab)
