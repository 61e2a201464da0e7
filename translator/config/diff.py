"""Differences between two configs as key paths: what resume, fine-tuning and averaging
check before they combine a saved run with another config."""

from __future__ import annotations

import json

SHOWN = 8  # differing keys named in one message


def flatten(tree: dict, prefix: str = "") -> dict:
    """{"a": {"b": 1}, "c": [{"d": 2}]} -> {"a.b": 1, "c[0].d": 2}, whatever sections a
    config has: a list of sections (data.corpora) is opened too, so a change names its entry
    and key rather than the whole list."""
    flat = {}
    for key, value in tree.items():
        if isinstance(value, dict) and value:
            flat.update(flatten(value, f"{prefix}{key}."))
        elif isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
            for i, item in enumerate(value):
                flat.update(
                    flatten(item, f"{prefix}{key}[{i}].") if item else {f"{prefix}{key}[{i}]": {}}
                )
        else:
            flat[f"{prefix}{key}"] = value
    return flat


def config_changes(saved: dict, given: dict) -> dict[str, tuple]:
    """Key path -> (saved value, given value) for each key that differs; a key that only
    one side has is paired with `Ellipsis`."""
    old, new = flatten(saved), flatten(given)
    keys = sorted(old.keys() | new.keys())
    return {
        k: (old.get(k, ...), new.get(k, ...)) for k in keys if old.get(k, ...) != new.get(k, ...)
    }


def describe_changes(changes: dict[str, tuple]) -> str:
    def show(value) -> str:
        return "unset" if value is ... else json.dumps(value, default=str)

    parts = [f"{k} ({show(a)} -> {show(b)})" for k, (a, b) in list(changes.items())[:SHOWN]]
    more = len(changes) - SHOWN
    return ", ".join(parts) + (f" and {more} more" if more > 0 else "")
