"""What a key of the config holds by its schema: a section, a list, a default. `--set`
(overrides.py) asks it before it walks into a key the config leaves at its default."""

from __future__ import annotations

import copy
import types
import typing
from dataclasses import dataclass
from typing import Any

from translator.config.base import ModelConfig, Section
from translator.config.schema import Config
from translator.models import family as families


@dataclass(frozen=True)
class Shape:
    """A key's shape: whether it can hold a section or a list, and its default value."""

    section: bool
    listed: bool
    default: Any


def hints(cls: type) -> dict[str, Any]:
    """The annotations of a section's keys, constraints included."""
    return {name: f.rebuild_annotation() for name, f in cls.model_fields.items()}


def members(tp: Any) -> tuple[Any, ...]:
    """The types a key's annotation allows (one, or each member of a union)."""
    if typing.get_origin(tp) is typing.Annotated:
        tp = typing.get_args(tp)[0]
    if typing.get_origin(tp) in (typing.Union, types.UnionType):
        return typing.get_args(tp)
    return (tp,)


def _family(raw: dict) -> type:
    """The model section's class for the model.type `raw` gives (the default one for an
    unknown type, whose error the validation names)."""
    model = raw.get("model")
    kind = model.get("type", families.DEFAULT) if isinstance(model, dict) else families.DEFAULT
    return families.config_class(kind if kind in families.names() else families.DEFAULT)


def _field(section: type, key: str, raw: dict) -> Any:
    """The annotation of `key` in `section`; a model key of another family counts too."""
    if issubclass(section, ModelConfig):
        section = _family(raw)
        if key not in section.model_fields:
            owners = families.all_keys().get(key)
            section = families.config_class(owners[0]) if owners else section
    return hints(section).get(key)


def _defaults(raw: dict) -> dict:
    tree = Config().to_dict()
    tree["model"] = _family(raw)().to_dict()
    return tree


def shape(raw: dict, steps: list[str | int]) -> Shape | None:
    """The shape of the key that `steps` ("train", "betas") name, for the config `raw`
    (its model.type picks the model keys); None for a key the schema does not have."""
    section: type | None = Config
    tp: Any = None
    default: Any = _defaults(raw)
    for step in steps:
        if isinstance(step, str):
            tp = _field(section, step, raw) if section is not None else None
            default = default.get(step) if isinstance(default, dict) else None
        else:
            listed = [m for m in members(tp) if typing.get_origin(m) is list]
            tp = typing.get_args(listed[0])[0] if listed else None
            inside = isinstance(default, list) and step < len(default)
            default = default[step] if inside else None
        if tp is None:
            return None
        held = [m for m in members(tp) if isinstance(m, type) and issubclass(m, Section)]
        section = held[0] if held else None
    listed = any(typing.get_origin(m) is list for m in members(tp))
    return Shape(section is not None, listed, copy.deepcopy(default))
