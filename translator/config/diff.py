"""Differences between two configs as key paths: what resume, fine-tuning and averaging
check before they combine a saved run with another config."""

from __future__ import annotations

import json

SHOWN = 8  # differing keys named in one message


def flatten(tree: dict, prefix: str = "") -> dict:
    """{"a": {"b": 1}} -> {"a.b": 1}, whatever sections a config has."""
    flat = {}
    for key, value in tree.items():
        if isinstance(value, dict) and value:
            flat.update(flatten(value, f"{prefix}{key}."))
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
