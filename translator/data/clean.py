"""Cleaning of the training pairs: stripped, and dropped when either side is empty or longer
than data.max_words. Dev and test are never cleaned: BLEU is scored on the references as
the user wrote them."""

from __future__ import annotations

from translator.data.readers import Pair
from translator.errors import UserError


def clean_pair(src: str, tgt: str, max_words: int) -> Pair | str:
    """The stripped pair, or why it is dropped ("empty" or "too_long")."""
    src, tgt = src.strip(), tgt.strip()
    if not src or not tgt:
        return "empty"
    if len(src.split()) > max_words or len(tgt.split()) > max_words:
        return "too_long"
    return src, tgt


def clean_pairs(pairs, max_words: int) -> tuple[list[Pair], dict[str, int]]:
    """Strip both sides; drop pairs empty on either side or longer than max_words."""
    kept: list[Pair] = []
    dropped = {"empty": 0, "too_long": 0}
    for src, tgt in pairs:
        result = clean_pair(src, tgt, max_words)
        if isinstance(result, str):
            dropped[result] += 1
        else:
            kept.append(result)
    return kept, dropped


def empty_after_cleaning(source: str, read: int, dropped: dict, max_words: int) -> UserError:
    return UserError(
        f"{source}: the training split is empty after cleaning: {read} pairs "
        f"read, {dropped['empty']} dropped as empty, {dropped['too_long']} "
        f"dropped as longer than data.max_words={max_words}"
    )
