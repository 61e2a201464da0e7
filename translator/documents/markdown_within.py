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


def edge_pieces(reader, first: int, close: str) -> tuple[str, str, tuple[int, int]]:
    """The markup with no words (tags left open, lone pieces placed, the spaces between
    them) that the source wrote right after the opening of the pair stack[first - 1] of the
    markdown_inline `reader`, and right before its closing `close`, where the pair has words
    and no label: taken off the stack and out of the spans, to stay in that opening and
    closing as written (moved out, a tag would leave whitespace or its word on the wrong
    side of the markup); and how many spaces of the plain text's first and last they hold
    (markdown_held.edges takes them out, or keeps them as the separator)."""
    stack = reader.stack
    _, raw, at, _, src_at = stack[first - 1]
    text = since(reader.plain, reader.size, at)
    if close in ("]", "][]") or not text.strip():
        return "", "", (0, 0)
    bounds = src_at + len(raw), reader.at - len(close)
    head, tail, low, high, gone, gaps = _scan(reader, first, *bounds, True)
    inner = text[gaps[0] : len(text) - gaps[1]]
    if text[: gaps[0]].strip() or text[len(inner) + gaps[0] :].strip() or not inner.strip():
        # (spaces the plain text does not hold there: only pieces written together)
        head, tail, low, high, gone, gaps = _scan(reader, first, *bounds, False)
    for key, *_ in stack[first:low] + stack[high:]:
        reader.keys[key] -= 1
    stack[first:] = stack[low:high]
    for k in gone:
        reader.spans[k] = (reader.spans[k][0], reader.spans[k][0], None)
        reader.lones.take(k)
    return "".join(head), "".join(reversed(tail)), (gaps[0], gaps[1])


def _spaces(src: str, at: int, forward: bool) -> int:
    """How many spaces, tabs or line breaks src has from `at` on (or before it)."""
    n = 0
    while 0 <= (k := at + n if forward else at - n - 1) < len(src) and src[k] in " \t\n":
        n += 1
    return n


def _scan(reader, first: int, start: int, end: int, spaced: bool):
    """The pieces (and, where `spaced`, the spaces or tabs before each) the source wrote
    from `start` on and up to `end` (edge_pieces): (head, tail, where the stack's kept part
    begins and ends, the lone pieces taken, the spaces the head and tail hold between)."""
    stack, src, lones, spans = reader.stack, reader.src, reader.lones, reader.spans
    low, high, gone, head, tail, gaps = first, len(stack), [], [], [], [0, 0]
    while True:  # (a piece's raw starts where it stands: at most the whitespace after it)
        gap = _spaces(src, start, True) if spaced else 0
        at = start + gap
        if low < high and stack[low][4] == at:
            raw = stack[low][1]
            low += 1
        elif (
            (k := lones.starts.get(at)) is not None
            and src.startswith(raw := spans[k][2].raw.lstrip(" \t"), at)
            and (lead := len(spans[k][2].raw) - len(raw)) <= gap
        ):
            raw, gap = spans[k][2].raw, gap - lead
            gone.append(k)
        else:
            break
        head.append(src[start : start + gap] + raw)
        gaps[0] += gap
        start += len(head[-1])
    while True:  # (a piece's raw ends where it stands: with the whitespace it took before)
        gap = _spaces(src, end, False) if spaced else 0
        at = end - gap
        if low < high and stack[high - 1][4] + len(stack[high - 1][1]) == at:
            raw = stack[high - 1][1]
            high -= 1
        elif (
            (k := lones.ends.get(at)) is not None
            and src.endswith(spans[k][2].raw, 0, at)
            and k not in gone
        ):
            raw = spans[k][2].raw
            gone.append(k)
        else:
            break
        tail.append(raw + src[at:end])
        gaps[1] += gap
        end -= len(tail[-1])
    return head, tail, low, high, gone, gaps
