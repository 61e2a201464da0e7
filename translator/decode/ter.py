"""Word tags from TER's alignment of a hypothesis with its reference: each hypothesis word
OK where the alignment, after TER's phrase shifts, matches it to the same reference word
(as tercom's word tags for quality estimation; decode/confidence.py's word-level figures
read them)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass


def word_labels(hypothesis: str, reference: str, shifts: bool = True) -> list[bool]:
    """Each hypothesis word: True where TER's alignment with the reference matches it to the
    same word, as tercom's word tags of WMT quality estimation do: phrases are shifted
    while a shift lowers the edit distance, so a phrase in another place than the
    reference's still counts OK (`shifts=False`: one edit-distance alignment, no shifts)."""
    hyp, ref = hypothesis.split(), reference.split()
    order, pairs, _ = ter_alignment(hyp, ref, shifts)
    ok = [False] * len(hyp)
    for i, j in pairs:
        if hyp[order[i]] == ref[j]:
            ok[order[i]] = True
    return ok


def ter_alignment(hyp: Sequence[str], ref: Sequence[str], shifts: bool = True):
    """TER's alignment of word lists: (the hypothesis's order after the shifts, as original
    positions; the (shifted position, reference position) pairs aligned, matched or
    substituted; TER's edit count, shifts included)."""
    order, now, moves = list(range(len(hyp))), _alignment(hyp, ref), 0
    while shifts and now.edits > 0:
        shifted = _best_shift([hyp[k] for k in order], ref, now)
        if shifted is None:
            break
        moved, now = shifted
        order, moves = [order[k] for k in moved], moves + 1
    return order, now.pairs, now.edits + moves


MAX_SHIFT_SIZE, MAX_SHIFT_DIST = 10, 50  # tercom's limits on a shifted phrase


@dataclass(frozen=True)
class _Alignment:
    """An edit-distance alignment as tercom makes it (of equal costs, a match or substitution
    first, then a dropped hypothesis word): its edits, the (hypothesis, reference) positions
    aligned, where each reference word sits in the hypothesis (the position aligned to it
    or, for a reference word left out, the last one before it; -1 for none), and the
    positions of each side that are not matched."""

    edits: int
    pairs: list[tuple[int, int]]
    at: list[int]
    hyp_wrong: set[int]
    ref_wrong: set[int]


def _alignment(hyp: Sequence[str], ref: Sequence[str]) -> _Alignment:
    n, m = len(hyp), len(ref)
    cost = [list(range(m + 1))]
    for i in range(1, n + 1):
        row, above = [i], cost[-1]
        for j in range(1, m + 1):
            diag = above[j - 1] + (hyp[i - 1] != ref[j - 1])
            row.append(min(diag, above[j] + 1, row[j - 1] + 1))
        cost.append(row)
    path, i, j = [], n, m  # (hypothesis position or None, reference position or None)
    while i > 0 or j > 0:
        if i and j and cost[i][j] == cost[i - 1][j - 1] + (hyp[i - 1] != ref[j - 1]):
            i, j = i - 1, j - 1
            path.append((i, j))
        elif i and cost[i][j] == cost[i - 1][j] + 1:
            i -= 1
            path.append((i, None))
        else:
            j -= 1
            path.append((None, j))
    pairs, at, last = [], [-1] * m, -1
    for i, j in reversed(path):
        last = last if i is None else i
        if j is not None:
            at[j] = last
        if i is not None and j is not None:
            pairs.append((i, j))
    matched = [(i, j) for i, j in pairs if hyp[i] == ref[j]]
    return _Alignment(
        cost[n][m], pairs, at, set(range(n)) - {i for i, _ in matched},
        set(range(m)) - {j for _, j in matched},
    )  # fmt: skip


def _best_shift(hyp, ref, now: _Alignment):
    """The shift of a hypothesis phrase onto an identical reference phrase that lowers the
    edit distance most (then the longest, the earliest, as tercom ranks them), of those
    tercom tries (a phrase with a wrong word, onto reference words not all matched): (the
    new order of positions, its alignment), or None where none lowers it."""
    best, found = None, None
    for start_h in range(len(hyp)):
        for start_r in range(len(ref)):
            if abs(start_r - start_h) > MAX_SHIFT_DIST:
                continue
            length = 0
            while (
                length < MAX_SHIFT_SIZE and start_h + length < len(hyp)
                and start_r + length < len(ref) and hyp[start_h + length] == ref[start_r + length]
            ):  # fmt: skip
                length += 1
                span_h, span_r = range(start_h, start_h + length), range(start_r, start_r + length)
                if now.hyp_wrong.isdisjoint(span_h) or now.ref_wrong.isdisjoint(span_r):
                    continue
                if start_h <= now.at[start_r] < start_h + length:
                    continue  # onto itself
                for dest in _destinations(start_r, length, now.at):
                    moved = _moved(list(range(len(hyp))), start_h, length, dest)
                    after = _alignment([hyp[k] for k in moved], ref)
                    rank = (now.edits - after.edits, length, -start_h, -dest)
                    if after.edits < now.edits and (best is None or rank > best):
                        best, found = rank, (moved, after)
    return found


def _destinations(start_r: int, length: int, at: list[int]) -> list[int]:
    """Where a phrase matching the reference from `start_r` may go, as the position in the
    hypothesis it goes before: after the word where the reference word before it sits, or
    where one of its own words does."""
    return sorted({0 if j < 0 else at[j] + 1 for j in range(start_r - 1, start_r + length)})


def _moved(items: list, start: int, length: int, dest: int) -> list:
    """`items` with items[start:start + length] put before items[dest] (or last)."""
    span = items[start : start + length]
    if dest < start:
        return items[:dest] + span + items[dest:start] + items[start + length :]
    if dest > start + length:
        return items[:start] + items[start + length : dest] + span + items[dest:]
    # a place within its own span: moved on by `dest - start`, as tercom does
    return items[:start] + items[start + length : length + dest] + span + items[length + dest :]
