"""A config's types and values in words, for its errors and its reference
(docs/configuration.md): "an integer greater than 0", "a list of numbers", "true"."""

from __future__ import annotations

import base64
import math
import types
import typing
from dataclasses import fields
from typing import Any

import yaml
from annotated_types import Le

from translator.config.base import LARGEST, Section

_WORDS = {
    bool: ("true or false", "true/false values"),
    int: ("an integer", "integers"),
    float: ("a number", "numbers"),
    str: ("a string", "strings"),
}


def _plain(value: Any) -> Any:
    """1000000.0 as 1000000, for reading."""
    return int(value) if isinstance(value, float) and value.is_integer() else value


def _bounds(base: str, limits: list[Any]) -> str:
    """`base` ("an integer") with its limits in words: "an integer greater than 0"; the top
    that every count has (base.LARGEST) comes after the lower bound's words."""
    low = {type(m).__name__: type(m)(_plain(getattr(m, fields(m)[0].name))) for m in limits}
    if "Le" in low and low["Le"].le == LARGEST:
        return f"{_bounds(base, [m for m in limits if not isinstance(m, Le)])}, at most {LARGEST}"
    if "Ge" in low and ("Lt" in low or "Le" in low):
        top = low.get("Lt") or low.get("Le")
        close = "]" if "Le" in low else ")"
        return f"{base} in [{low['Ge'].ge}, {getattr(top, 'lt', getattr(top, 'le', None))}{close}"
    if "Gt" in low and "Le" in low:
        return f"{base} in ({low['Gt'].gt}, {low['Le'].le}]"
    if "Gt" in low:
        return f"{base} greater than {low['Gt'].gt}"
    if "Ge" in low:
        return f"{base} of at least {low['Ge'].ge}" if low["Ge"].ge else f"{base}, not negative"
    return base


def type_words(tp: Any) -> str:
    """A key's type in words, for errors and the configuration reference: "an integer",
    "a list of numbers", "a number or null", "a mapping {src, tgt}, a string or null"."""
    origin = typing.get_origin(tp)
    if origin is typing.Annotated:
        inner, *extra = typing.get_args(tp)
        limits = [m for m in extra if type(m).__module__ == "annotated_types"]
        return _bounds(type_words(inner), limits)
    if origin is typing.Literal:
        words = [str(a) for a in typing.get_args(tp)]
        return f"{', '.join(words[:-1])} or {words[-1]}"
    if origin in (typing.Union, types.UnionType):
        words = [type_words(a) for a in typing.get_args(tp)]
        return f"{', '.join(words[:-1])} or {words[-1]}"
    if tp is type(None):
        return "null"
    if origin is list:
        (item,) = typing.get_args(tp)
        words = type_words(item)
        if words.startswith("a mapping"):
            return "a list of mappings" + words[len("a mapping") :]
        for one, many in _WORDS.values():
            if words.startswith(one):
                return f"a list of {many}{words[len(one) :]}"
        return f"a list of {words}"
    if isinstance(tp, type) and issubclass(tp, Section):
        return "a mapping {" + ", ".join(tp.model_fields) + "}"
    return _WORDS[tp][0] if tp in _WORDS else str(tp).replace("typing.", "")


def as_written(value: Any) -> str:
    """A config value as YAML spells it (true, null, 2024-01-01, [1, 2]), so an error
    shows what was typed; a string keeps its quotes, so that ' ' shows as a space."""
    if value is None or isinstance(value, bool):
        return {None: "null", True: "true", False: "false"}[value]
    if isinstance(value, (str, int, float)):
        return repr(value)
    if isinstance(value, bytes):
        return f"!!binary {base64.b64encode(value).decode('ascii')}"
    try:
        text = yaml.safe_dump(value, default_flow_style=True, width=math.inf, allow_unicode=True)
    except yaml.YAMLError:  # not plain data: no YAML spelling
        return repr(value)
    return text.removesuffix("\n").removesuffix("\n...").strip()
