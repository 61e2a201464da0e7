"""`--set KEY=VALUE`: one key of the config replaced before it is validated. KEY is a dotted
path whose parts may name a list entry by its index (`data.corpora[1].weight=3`); VALUE is
read as a YAML scalar or flow collection (`--set data.langs=[de,en]`)."""

from __future__ import annotations

import re
from typing import Any

import yaml

from translator.errors import UserError


class KeyProblem(yaml.constructor.ConstructorError):
    """YAML whose mapping has a key that is no key of a config: a list or a mapping, or a
    key given twice (config/load.py's reader raises it)."""


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


def apply_override(raw: dict, assignment: str, read, shape) -> None:
    """Set one key of `raw` in place; an unset section (`data.test: null`) is made on the
    way, a list entry must exist already (the list is set whole otherwise). `read` reads
    the value's YAML; `shape(raw, steps)` (shapes.py) says what a key the config leaves out holds: a list at its default
    is indexed from that default, and a key that holds no section is not walked into."""
    if "=" not in assignment:
        raise UserError(f"--set '{assignment}': expected KEY=VALUE, e.g. --set train.lr=0.001")
    key, text = assignment.split("=", 1)
    try:
        value = read(text) if text.strip() else None
    except KeyProblem as err:
        raise UserError(f"--set '{assignment}': {err.problem}") from None
    except yaml.YAMLError:
        value = text
    steps = _steps(key, assignment)
    node: Any = raw
    for i, (step, following) in enumerate(zip(steps, steps[1:])):
        where = _named(steps[: i + 1])
        known = shape(raw, steps[: i + 1])  # (None for a key the schema lacks)
        if isinstance(step, int):
            child = node[step]
        elif step not in node and known is not None and isinstance(known.default, list):
            child = node[step] = known.default
        else:
            child = node.get(step)
        if child is None and isinstance(following, str):
            if known is not None and not known.section:
                raise UserError(f"--set '{assignment}': '{where}' is not a section")
            child = node[step] = {}
        if isinstance(following, int):
            _entry(assignment, where, child, following, known)
        elif not isinstance(child, dict):
            raise UserError(f"--set '{assignment}': '{where}' is not a section")
        node = child
    node[steps[-1]] = value


def _entry(assignment: str, where: str, child: Any, index: int, known) -> None:
    """Refuse an index into `child` (the key `where`) that is not one of its entries."""
    whole = f"set the whole list to add one, e.g. --set '{where}=[...]'"
    if child is None and known is not None and known.listed:
        raise UserError(f"--set '{assignment}': '{where}' is null and has no entries", whole)
    if not isinstance(child, list):
        raise UserError(f"--set '{assignment}': '{where}' is not a list")
    if index >= len(child):
        raise UserError(
            f"--set '{assignment}': '{where}' has {len(child)} entries, numbered from 0", whole
        )


def refuse_other_sections(
    assignments: list[str], sections: tuple[str, ...], command: str, hint: str | None = None
) -> None:
    """Refuse a `--set` key outside `sections`: a command that reads a saved model's config
    can apply only some of it, and a key it would leave unused must not look applied."""
    for assignment in assignments:
        key = assignment.split("=", 1)[0].strip()
        if re.split(r"[.\[]", key, maxsplit=1)[0].strip() not in sections:
            taken = " and ".join(f"{name}.*" for name in sections)
            raise UserError(
                f"--set '{assignment}': {command} applies only {taken} keys; the model, "
                "its vocabulary and its training are the checkpoint's",
                hint,
            )
