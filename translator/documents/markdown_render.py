"""A translation's words rendered back with the Markdown markup that
markdown_inline.read_inline read from the source: pairs around the words aligned to theirs,
atoms in place of the words that stand for them, lone marks glued where they were, and
characters escaped as the source escaped them."""

from __future__ import annotations

from translator.documents.markdown_inline import Mark


def _escaped(word: str, escapes: dict[str, str]) -> str:
    return "".join(escapes.get(ch, ch) for ch in word) if escapes else word


def _atoms(words: list[str], start: int, atoms: list[tuple[int, Mark]], esc) -> str:
    """The atoms placed on the target words from `start` (each (end, Mark)), in place of
    those words: where the words hold what the model read for each atom (a copied code
    span, in any case), in place of that alone; else as the source word held them, with
    the text glued around and between them there."""
    joined = " ".join(words[start : max(end for end, _ in atoms)])
    out, at = [], 0
    for _, mark in atoms:
        text = " ".join(mark.text.split())
        found = joined.lower().find(text.lower(), at) if text else -1
        if found < 0:
            break
        out += [esc(joined[at:found]), mark.raw]
        at = found + len(text)
    else:
        return "".join(out) + esc(joined[at:])
    marks = [mark for _, mark in atoms]
    out = [esc(marks[0].prefix)]
    for mark, after in zip(marks, marks[1:], strict=False):
        out += [mark.raw, esc(after.prefix[len(mark.prefix) + len(mark.text) :])]
    return "".join(out) + marks[-1].raw + esc(marks[-1].suffix)


def _cut(word: str, opens: list[Mark], closes: list[Mark]) -> tuple[str, str]:
    """The text of `word` that stays outside the markup opening and closing on it: the
    source's glued text ('(' and '),' of '(**a**),') where the word has it too."""
    head = opens[0].prefix if opens and len({m.prefix for m in opens}) == 1 else ""
    tail = closes[0].suffix if closes and len({m.suffix for m in closes}) == 1 else ""
    head = head if word.startswith(head) and len(head) < len(word) else ""
    fits = word.endswith(tail) and len(head) + len(tail) < len(word)
    return head, tail if fits else ""


def _siblings(word: str, marks: list[Mark], esc) -> str | None:
    """`word` with several pairs that open and close in it (`<kbd>Ctrl</kbd>+<kbd>C</kbd>`)
    each around the characters between its glued text, where the word still has that text
    (in any case) and the pairs nest or stand apart; else None."""
    at, folded = [], word.lower() if len(word.lower()) == len(word) else word
    for mark in marks:
        a, b = len(mark.prefix), len(word) - len(mark.suffix)
        head, tail = mark.prefix.lower(), mark.suffix.lower()  # (a word in capitals too)
        if not (folded.startswith(head) and folded.endswith(tail) and a < b):
            return None
        at.append((a, b, mark))
    for a1, b1, _ in at:
        if any(a1 < a2 < b1 < b2 for a2, b2, _ in at):
            return None
    # at one place, inner pairs close first and outer ones open first; of pairs around the
    # same characters, the one opened first (marks come in opening order) is the outer
    ranked = [(a, b, k, m) for k, (a, b, m) in enumerate(at)]
    closing = sorted(ranked, key=lambda x: (-x[0], -x[2]))
    opening = sorted(ranked, key=lambda x: (-x[1], x[2]))
    out = []
    for i in range(len(word) + 1):
        out += [m.close for _, b, _, m in closing if b == i]
        out += [m.raw for a, _, _, m in opening if a == i]
        out.append(esc(word[i : i + 1]))
    return "".join(out)


def _with_inside(word: str, head: str, tail: str, marks: list[Mark], esc):
    """(the escaped head, core and tail of `word`, the raws that go after it): lone marks
    glued inside the word in the source (`marks`, kind 'inside') put back after the text
    before them where the word still begins with it (in any case), else after the word. On
    the edge of head and core a mark goes before the opening markup, on the edge of core
    and tail before the closing."""
    folded = word.lower() if len(word.lower()) == len(word) else word
    bounds = (0, len(head), len(word) - len(tail), len(word))
    places: list[list[tuple[int, str]]] = [[], [], []]
    lost = []
    for mark in marks:
        at = len(mark.prefix)
        if at > len(word) or not folded.startswith(mark.prefix.lower()):
            lost.append(mark.raw)
            continue
        places[0 if at <= bounds[1] else 1 if at <= bounds[2] else 2].append((at, mark.raw))
    parts = []
    for part, (lo, hi) in enumerate(zip(bounds, bounds[1:])):
        text, at = [], lo
        for where, raw in sorted(places[part], key=lambda p: p[0]):
            text += [esc(word[at:where]), raw]
            at = where
        parts.append("".join(text) + esc(word[at:hi]))
    return parts, lost


def render(words: list[str], seps: list[str], spans, escapes=None) -> str:
    """The target `words` joined by `seps` with each span's markup: spans are
    (start, end, Mark) word ranges of `words` as inline.transfer gives them; characters the
    source escaped are escaped the same way in the words."""

    def esc(text: str) -> str:
        return _escaped(text, escapes or {})

    n = len(words)
    opens, closes = [[] for _ in range(n + 1)], [[] for _ in range(n + 1)]
    after, before, lead = [[] for _ in range(n + 1)], [[] for _ in range(n + 1)], []
    inside: list[list[Mark]] = [[] for _ in range(n + 1)]
    atoms: dict[int, list[tuple[int, Mark]]] = {}
    covered: dict[int, int] = {}  # a word inside an atom -> the word the atom starts at
    for start, end, mark in sorted(spans, key=lambda span: span[:2]):
        if mark.kind == "pair" and end > start:
            opens[start].append((-end, mark.order, mark))
            closes[end - 1].append((-start, -mark.order, mark))
        elif mark.kind == "atom" and end > start:
            first = covered.get(start, start)  # one atom starting inside another joins it
            atoms.setdefault(first, []).append((end, mark))
            covered |= dict.fromkeys(range(first + 1, max(end for end, _ in atoms[first])), first)
        elif mark.kind == "inside" and start < n:
            inside[start].append(mark)
        elif mark.kind == "lead" or (start == 0 and n):
            lead.append(mark.raw + mark.close)
        elif mark.kind == "before" and start < n:
            before[start].append(mark.raw)
        else:  # an empty span, or a lone raw: after the word before it
            after[start - 1 if n else 0].append(mark.raw + mark.close)
    out = list(lead)
    held: dict[int, str] = {}  # an atom's last word -> the text after the markup closing there
    for k in range(n):
        o = [m for *_, m in sorted(opens[k], key=lambda x: x[:2])]
        c = [m for *_, m in sorted(closes[k], key=lambda x: x[:2])]
        if k in covered:  # inside an atom: only what closes or follows here
            out += [m.close for m in c] + [held.pop(k, "")] + after[k]
            continue
        glued = [] if k in atoms or k in covered else inside[k]
        after[k] += [m.raw for m in inside[k] if m not in glued]
        if k in atoms:  # the atoms' text, cut as a word is where markup opens and closes
            core = _atoms(words, k, atoms[k], esc)
            last = max(end for end, _ in atoms[k]) - 1
            ending = [m for *_, m in closes[last]]
            head, tail = _cut(core, o, ending)
            core = core[len(head) : len(core) - len(tail)]
            if last > k:
                held[last], tail = tail, ""
        elif len(o) > 1 and set(o) == set(c) and (whole := _siblings(words[k], o, esc)) is not None:
            out += [seps[k] if k else "", *before[k], whole, *after[k], *(m.raw for m in glued)]
            continue
        else:
            (head, core, tail), lost = _with_inside(words[k], *_cut(words[k], o, c), glued, esc)
            after[k] += lost
        out += [seps[k] if k else "", *before[k], head, *(m.raw for m in o), core]
        out += [*(m.close for m in c), tail, *after[k]]
    if not n:
        out += after[0]
    return "".join(out)
