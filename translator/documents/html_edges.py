"""The edges at a rendered sentence's ends (html.py): those inside its first word and its
last, and the whitespace between it and the elements around its words."""

from __future__ import annotations

from bisect import bisect_left

from translator.documents.html_glue import Sentence


def in_word(body: str, sentence: Sentence, escape) -> str:
    """The rendered words with the edges inside the first word and the last (Sentence.head_in,
    tail_in) written there, where the words keep the source's text around them (in any
    case): an edge of a word glued across two elements ("Ein</i><b>Mann.") stays between
    their parts; elsewhere before and after the words."""
    if sentence.head_in:
        texts = [escape(t) for t, _ in sentence.head_in]
        lead = "".join(texts)
        if body[: len(lead)].lower() == lead.lower() and len(body) > len(lead):
            body = _between_parts(body, texts, [r for _, r in sentence.head_in], 0)
        else:
            body = "".join(r for _, r in sentence.head_in) + body
    if sentence.tail_in:
        texts = [escape(t) for _, t in sentence.tail_in]
        trail = "".join(texts)
        if body[len(body) - len(trail) :].lower() == trail.lower() and len(body) > len(trail):
            body = _between_parts(body, texts, [r for r, _ in sentence.tail_in], len(trail))
        else:
            body += "".join(r for r, _ in sentence.tail_in)
    return body


def _between_parts(body: str, texts: list[str], edges: list[str], trail: int) -> str:
    """`body` with each edge written after the part of it as long as its text (`texts`,
    from the start), or (`trail`: their length) before it, in the end of `body`."""
    at = len(body) - trail if trail else 0
    out = [body[:at]]
    for text, edge in zip(texts, edges, strict=True):
        part = body[at : at + len(text)]
        out += [edge, part] if trail else [part, edge]
        at += len(text)
    return "".join(out) + body[at:]


class Margins:
    """The whitespace between a sentence's words and the elements that open before its first
    word or close after its last in that whitespace ("<i>\n Note", "2.1. </span>"), written
    inside them as in the source; the unit writes the rest around the sentence (`lo`, `hi`)."""

    def __init__(self, text: str, at: tuple[int, int], own, edges):
        self.text, self.own = text, own
        self.edges = [edge[0] for edge in edges]  # (those the unit writes in place)
        self.start, self.end = at  # the sentence's characters in the unit's text
        self.lo, self.hi = at  # the whitespace written inside, from lo (before) and to hi (after)
        self.lead = None  # the last start tag written so: (its place in out, its text, offset)

    def opening(self, out: list[str], head: int, mark, raw: str) -> bool:
        """Whether the start tag `raw` of `mark`, written before anything but the sentence's
        `head` edges and tags written so, stands in the whitespace before the words (holding
        some of them, and no edge the unit writes after it): it is written there, with that
        whitespace after it."""
        last, at = self.lead[2] if self.lead else 0, mark.open_at
        if len(out) != (self.lead[0] + 1 if self.lead else head):
            return False
        if at is None or not last <= at < self.start or not self.text[at : self.start].isspace():
            return False
        if (mark.close_at or 0) <= self.start or self._edge(at + 1, self.start + 1):
            return False
        if self.lead is not None:  # (the one written before holds the whitespace up to this)
            place, written, _ = self.lead
            out[place] = written + self.own(last, at)
        out.append(raw + self.own(at, self.start))
        self.lead, self.lo = (len(out) - 1, raw, at), min(self.lo, at)
        return True

    def closing(self, at: int | None) -> str:
        """The whitespace to write before the end tag at offset `at`, after the last word:
        the source's, where the tag stands in the whitespace after the words."""
        if at is None or at < self.hi or not self.text[self.end : at].isspace():
            return ""
        if self._edge(self.end, at):
            return ""
        written, self.hi = self.own(self.hi, at), at
        return written

    def _edge(self, lo: int, hi: int) -> bool:
        """Whether an edge the unit writes in place lies at an offset in [lo, hi)."""
        n = bisect_left(self.edges, lo)
        return n < len(self.edges) and self.edges[n] < hi
