"""`--set KEY=VALUE`: one key of the config replaced before it is validated. KEY is a dotted
path whose parts may name a list entry by its index (`data.corpora[1].weight=3`); VALUE is
read as a YAML scalar or flow collection (`--set data.langs=[de,en]`)."""

from __future__ import annotations

import re
from typing import Any

import yaml

from translator.errors import UserError

PART = re.compile(r"([^\[\]]+)((?:\[\d+\])*)")


def _steps(key: str, assignment: str) -> list[str | int]:
    """The keys and list indices `key` walks through: "a.b[1].c" -> ["a", "b", 1, "c"]."""
    steps: list[str | int] = []
    for part in key.strip().split("."):
        found = PART.fullmatch(part.strip())
        if not found:
            raise UserError(
                f"--set '{assignment}': '{part}' is not a key",
                "give a dotted path of keys, a list entry as NAME[N], e.g. data.corpora[0].weight",
            )
        steps.append(found.group(1))
        steps += [int(i) for i in re.findall(r"\d+", found.group(2))]
    return steps


def _named(steps: list[str | int]) -> str:
    return "".join(f"[{s}]" if isinstance(s, int) else f".{s}" for s in steps).lstrip(".")


def apply_override(raw: dict, assignment: str, read=yaml.safe_load) -> None:
    """Set one key of `raw` in place; an unset section (`data.test: null`) is made on the
    way, a list entry must exist already (the list is set whole otherwise)."""
    if "=" not in assignment:
        raise UserError(f"--set '{assignment}': expected KEY=VALUE, e.g. --set train.lr=0.001")
    key, text = assignment.split("=", 1)
    try:
        value = read(text) if text.strip() else None
    except yaml.YAMLError:
        value = text
    steps = _steps(key, assignment)
    node: Any = raw
    for i, (step, following) in enumerate(zip(steps, steps[1:])):
        child = node[step] if isinstance(step, int) else node.get(step)
        if child is None and isinstance(following, str):
            child = node[step] = {}
        where = _named(steps[: i + 1])
        if isinstance(following, int):
            if not isinstance(child, list):
                raise UserError(f"--set '{assignment}': '{where}' is not a list")
            if following >= len(child):
                raise UserError(
                    f"--set '{assignment}': '{where}' has {len(child)} entries, numbered from 0",
                    f"set the whole list to add one, e.g. --set '{where}=[...]'",
                )
        elif not isinstance(child, dict):
            raise UserError(f"--set '{assignment}': '{where}' is not a section")
        node = child
    node[steps[-1]] = value
