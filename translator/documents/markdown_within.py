"""Lone Markdown marks (a tag left open, an autolink) that the source wrote right after a
pair's opening on the same word (`[<a href="v">c](u)`): rendered inside that opening; and
those at the inner edges of a pair's markup (`[<br> c](u)`, `*a<br>*`): kept in its
opening or closing."""

from __future__ import annotations

from translator.documents.markdown_source import since


def opened_before(spans, start: int, mark) -> bool:
    """Whether a pair the source opened before the lone `mark` (and closed after it) opens
    on word `start` of `spans`, where the mark is glued: it goes inside that word, after
    the opening (a mark before the word would come before it)."""
    return any(
        m.kind == "pair" and b > a == start and m.src < mark.src < m.close_src for a, b, m in spans
    )


def lone_rank(at: int, mark, spans: dict, closed: dict) -> float:
    """Where a lone `mark` at `at` in a word goes among the markup there: after the
    openings there where the source wrote it after all of them, after the closings there
    where it wrote it after those, else first."""
    opening = [m for m, (a, _) in spans.items() if a == at]
    if opening and all(m.src < mark.src for m in opening):
        return 2.5
    return 1.5 if mark.src > closed.get(at, mark.src) else 0


def edge_pieces(reader, first: int, close: str) -> tuple[str, str]:
    """The markup with no words (tags left open, lone pieces placed) that the source wrote
    right after the opening of the pair stack[first - 1] of the markdown_inline `reader`,
    and right before its closing `close`, where the pair has words and no label: taken off
    the stack and out of the spans, to stay in that opening and closing as written (moved
    out, a tag would leave whitespace or its word on the wrong side of the markup)."""
    stack, src, lones = reader.stack, reader.src, reader.lones
    _, raw, at, _, src_at = stack[first - 1]
    if close in ("]", "][]") or not since(reader.plain, reader.size, at).strip():
        return "", ""
    low, high, gone = first, len(stack), []
    head, start = [], src_at + len(raw)
    while True:  # (a piece's raw starts where it stands: at most the whitespace after it)
        if low < high and stack[low][4] == start:
            head.append(stack[low][1])
            low += 1
        elif (k := lones.starts.get(start)) is not None and src.startswith(
            reader.spans[k][2].raw, start
        ):
            head.append(reader.spans[k][2].raw)
            gone.append(k)
        else:
            break
        start += len(head[-1])
    tail, end = [], reader.at - len(close)
    while True:  # (a piece's raw ends where it stands: with the whitespace it took before)
        if low < high and stack[high - 1][4] + len(stack[high - 1][1]) == end:
            tail.append(stack[high - 1][1])
            high -= 1
        elif (
            (k := lones.ends.get(end)) is not None
            and src.endswith(reader.spans[k][2].raw, 0, end)
            and k not in gone
        ):
            tail.append(reader.spans[k][2].raw)
            gone.append(k)
        else:
            break
        end -= len(tail[-1])
    for key, *_ in stack[first:low] + stack[high:]:
        reader.keys[key] -= 1
    stack[first:] = stack[low:high]
    for k in gone:
        reader.spans[k] = (reader.spans[k][0], reader.spans[k][0], None)
        lones.take(k)
    return "".join(head), "".join(reversed(tail))
