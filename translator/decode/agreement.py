"""The n-best agreement that confidence reads (decode/confidence.py): each hypothesis's
sentence chrF / 100 against the best of its list, for a whole batch of lists at once.

The figures are sacrebleu's sentence chrF (character n-grams up to 6, whitespace removed,
beta 2): the same n-gram counts, combined by sacrebleu's own f-score. The counting is
done by numpy over the batch: a Counter per text and order, in Python, costs more than all
the rest of confidence's work together.

Each order's n-grams get integer ids: an n-gram's id is the rank of the pair (its first
n-1 characters' id, its last character), so ids are exact for any alphabet and no
n-gram is ever compared as a string.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence

import numpy as np

ORDER = 6  # chrF's character order


def agreements(nbests: Sequence[Sequence[str]]) -> list[list[float]]:
    """For each n-best list, the chrF / 100 of each hypothesis after the first against the
    first ([1.0] for a list of one or none)."""
    if not nbests:
        return []
    sizes = [len(nb) for nb in nbests]
    starts = np.cumsum([0, *sizes[:-1]], dtype=np.int64)
    texts = ["".join(t.split()) for nb in nbests for t in nb]
    lengths = [len(t) for t in texts]
    matches = _matches(texts, lengths, np.repeat(starts, sizes)).tolist()
    score = chrf_scorer()._compute_f_score
    out = []
    for start, size in zip(starts.tolist(), sizes):
        row = []
        for t in range(start + 1, start + size):
            stats = []
            for n in range(1, ORDER + 1):
                ref_count = max(0, lengths[start] - n + 1)
                hyp_count = max(0, lengths[t] - n + 1) if ref_count else 0
                stats += (hyp_count, ref_count, matches[t][n - 1])
            row.append(score(stats) / 100)
        out.append(row or [1.0])
    return out


def _matches(texts: list[str], sizes: list[int], first: np.ndarray) -> np.ndarray:
    """[text, order - 1]: the n-grams each text shares with its list's best, counted as
    chrF counts them (each n-gram the lesser of its two counts); `sizes`: their lengths."""
    out = np.zeros((len(texts), ORDER), dtype=np.int64)
    lengths = np.array(sizes, dtype=np.int64)
    if not lengths.sum():
        return out
    codes = np.frombuffer("".join(texts).encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
    _, chars = np.unique(codes, return_inverse=True)
    chars = chars.astype(np.int64)
    alphabet = int(chars.max()) + 1
    text = np.repeat(np.arange(len(texts)), lengths)  # the text of each character
    end = np.repeat(np.cumsum(lengths), lengths)  # where that text ends
    is_best = first == np.arange(len(texts))
    ids = chars
    for n in range(1, ORDER + 1):
        if n > 1:  # the n-gram at each position from the (n-1)-gram there and one character
            _, ids = np.unique(ids[:-1] * alphabet + chars[n - 1 :], return_inverse=True)
        whole = np.arange(len(ids)) + n <= end[: len(ids)]  # not running into the next text
        if not whole.any():
            break
        grams = int(ids.max()) + 1
        keys, counts = np.unique(text[: len(ids)][whole] * grams + ids[whole], return_counts=True)
        owner = keys // grams
        # the same n-gram in the best of the owner's list: (best text, id) keys, sorted
        best = is_best[owner]
        in_best = keys[best]
        if not len(in_best):  # no best is n characters long
            break
        wanted = first[owner[~best]] * grams + keys[~best] % grams
        at = np.minimum(np.searchsorted(in_best, wanted), len(in_best) - 1)
        found = in_best[at] == wanted
        shared = np.where(found, np.minimum(counts[~best], counts[best][at]), 0)
        out[:, n - 1] = np.bincount(owner[~best], weights=shared, minlength=len(texts))
    return out


@functools.cache
def chrf_scorer():
    """One sacrebleu chrF scorer for every call (building one costs more than scoring)."""
    from sacrebleu.metrics import CHRF

    return CHRF()
