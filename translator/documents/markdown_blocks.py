"""A paragraph's translation kept one paragraph: a model that moves words can leave an HTML
tag first on a line (alone on the first one: `<br>`; or any `<div>`, `<!-- -->`), which
CommonMark reads as an HTML block's start, or a line blank, either ending the paragraph
and showing its markup as text. Such a tag is moved after the line's first word, or its
line joined with the next; a blank line is left out."""

from __future__ import annotations

import re
from collections import Counter

from markdown_it.common.html_re import HTML_TAG_RE
from markdown_it.rules_block.html_block import HTML_SEQUENCES

_LEAD = re.compile(r"[ \t]*")
_WORD_END = re.compile(r"\S(?=\s|$)")


def opens_block(line: str, first: bool) -> bool:
    """Whether CommonMark reads `line`, a paragraph's first line (`first`) or one after it,
    as the start of an HTML block (only some kinds may interrupt a paragraph)."""
    lead = _LEAD.match(line).end()
    if lead >= 4 or not line.startswith("<", lead):  # (an indented line: code or prose)
        return False
    return any(start.search(line[lead:]) and (first or interrupts)
               for start, _, interrupts in HTML_SEQUENCES)  # fmt: skip


def _kinds(md, text: str) -> Counter:
    """The inline markup `text` holds, as CommonMark reads it within a paragraph."""
    return Counter(
        (c.type, c.content if c.type in ("html_inline", "code_inline") else "")
        for tok in md.parseInline(text)
        for c in tok.children or []
        if c.type not in ("text", "softbreak")
    )


def unblocked(md, text: str, source: str) -> str:
    """`text`, a paragraph's translation of `source`, with no line that ends the paragraph
    where the source's same line did not (CommonMark as `md` parses it): a blank one, or
    one starting an HTML block."""
    src = source.split("\n")
    lines = text.split("\n")
    lines[0] = lines[0].lstrip(" \t")  # (the paragraph's own start: four spaces open code)
    if not any(_ends(lines, k, src) for k in range(len(lines))):
        return "\n".join(lines)
    kinds = _kinds(md, text)
    k = 0
    for _ in range(4 * len(lines) + 4):  # (each move or join is tried once per line)
        if k >= len(lines):
            break
        if not _ends(lines, k, src):
            k += 1
            continue
        for tried in _moves(lines, k):
            # (a join is kept where it keeps the markup: the joined line is looked at again)
            fewer = len(tried) < len(lines)
            if (fewer or not _ends(tried, k, src)) and _kinds(md, "\n".join(tried)) == kinds:
                lines = tried
                break
        else:
            k += 1  # (no move keeps the markup: left as it is)
    return "\n".join(lines)


def _ends(lines: list[str], k: int, src: list[str]) -> bool:
    """Whether line `k` ends the paragraph, where the source's same line did not."""
    if not lines[k].strip(" \t"):
        return len(lines) > 1
    first = k == 0
    return opens_block(lines[k], first) and not (k < len(src) and opens_block(src[k], first))


def _moves(lines: list[str], k: int):
    """The lines with line `k` left out where it is blank; else with its leading tags moved
    after each word end of the line in turn, the first first; where the tags are all the
    line holds, it joined with the next line (or the one before)."""
    line = lines[k]
    if not line.strip(" \t"):  # (a first line unindented, as above)
        rest = lines[k + 1 :] if k else [lines[1].lstrip(" \t"), *lines[2:]]
        yield [*lines[:k], *rest]
        return
    lead = _LEAD.match(line).end()
    at = lead
    while (tag := HTML_TAG_RE.match(line[at:])) is not None:
        at += tag.end()
        at = _LEAD.match(line, at).end()
    tags = line[lead:at].rstrip(" \t")
    space = line[lead + len(tags) : at]
    body = line[at:]
    if tags and body.strip():
        for end in _WORD_END.finditer(body):
            p = end.end()
            moved = line[:lead] + body[:p] + space + tags + body[p:]
            yield [*lines[:k], moved, *lines[k + 1 :]]
    elif k + 1 < len(lines):  # (and then the tags moved on the joined line)
        joined = line.rstrip(" \t") + " " + lines[k + 1].lstrip(" \t")
        yield [*lines[:k], joined, *lines[k + 2 :]]
    elif k:
        joined = lines[k - 1].rstrip(" \t") + " " + line.lstrip(" \t")
        yield [*lines[: k - 1], joined]
