"""A Markdown inline's source read as plain text with markup spans (markdown_render.py
renders a translation's words back with that markup).

markdown-it-py's inline children are walked along the inline's source text, so each piece
of markup keeps its exact source form: `*` or `_`, a link's `](url "title")`, an entity.
`read_inline` gives the plain text the model sees (text and soft breaks as written, a code
span's or an image's visible text) and spans over it: pairs (emphasis, strong, strike,
links, paired inline HTML tags) whose words are translated between their opening and
closing raw text; atoms (code spans, images) whose words are replaced by their raw text;
and empty atoms (autolinks, lone or crossed HTML tags, a backslash line break) glued to the
word before or after them, or kept inside a word, as in the source. An inline this walk
cannot follow is reported as None and left as it is.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections import Counter
from dataclasses import replace

from translator.documents.markdown_escapes import Escapes
from translator.documents.markdown_held import edges, held_after, held_code, released
from translator.documents.markdown_lones import Lones
from translator.documents.markdown_marks import Mark, glued
from translator.documents.markdown_source import (
    Unreadable,
    balanced,
    destination,
    ending,
    expect,
    match_text,
    since,
    taken_out,
)
from translator.documents.markdown_within import edge_pieces

_BREAK = re.compile(r"[ \t]*(\\?)\n[ \t]*")
_OPEN_TAG = re.compile(r"<([A-Za-z][A-Za-z0-9-]*)\b[^>]*(?<!/)>$")
_CLOSE_TAG = re.compile(r"</([A-Za-z][A-Za-z0-9-]*)\s*>$")
PAIRS = ("em", "strong", "s")
# pieces of Markdown's extensions that CommonMark reads as text, kept as they are and out of
# the model's text: footnote references and labels (`[^1]`, `[^1]:`), heading attributes
# (`{#id .class}` ending a line), template tags (`{% include x %}`, `{{ page.title }}`)
_EXTENSION = re.compile(r"\[\^[^\]\s]+\]:?|\{%.*?%\}|\{\{.*?\}\}|\{[#.:][^{}\n]*\}[ \t]*$")
_BOX = re.compile(r"\[[ xX]\](?=\s)")  # a task list item's box, where an inline begins


class _Reader:
    def __init__(self, src: str):
        self.src, self.at, self.plain = src, 0, []
        self.size, self.stack, self.spans, self.opened = 0, [], [], 0
        self.keys: Counter[str] = Counter()  # how many of each key the stack holds
        self.forms: list[str] = []  # each plain character as the source wrote it
        self.trim = 0
        self.reach = 0  # where the spans end, at the furthest
        self.lones = Lones()  # the lone pieces placed, which one beside them joins
        self.pending: list[tuple[int, int]] | None = None  # drops noted, not yet made
        self.last, self.trail = "", ""  # the last token's type; a code span's space after

    def add(self, text: str, forms: list[str] | None = None) -> None:
        forms = list(text) if forms is None else forms
        if self.trim:  # the whitespace after a leading lone mark, which its raw holds
            cut = min(self.trim, len(text) - len(text.lstrip()))
            text, forms, self.trim = text[cut:], forms[cut:], 0 if text[cut:] else self.trim - cut
        self.plain.append(text)
        self.forms += forms
        self.size += len(text)

    def push(self, key: str, raw: str) -> None:
        self.stack.append((key, raw, self.size, self.opened, self.at - len(raw)))
        self.keys[key] += 1
        self.opened += 1

    def demote(self, closing: int | None = None, index: int = -1) -> None:
        """An open inline HTML tag (the innermost, or the stack's `index`) was never closed
        inside this inline (or is crossed): a lone tag, placed as an empty atom where it
        stood. `closing`: where the markup being closed starts in the source. A tag right
        inside that markup and not kept in it (markdown_within.edge_pieces: a label's,
        `[a <b>] c`) is glued as the text outside it decides (to the word before)."""
        key, raw, at, _, src_at = self.stack.pop(index)
        self.keys[key] -= 1
        if self.pending and at == sum(self.pending[-1]):  # right after whitespace taken out
            at = self.pending[-1][0]
        begin, end = src_at, src_at + len(raw)
        if closing is not None:
            _, opening, _, _, opened_at = self.stack[index - 1 if index >= 0 else -1]
            begin = opened_at if src_at == opened_at + len(opening) else begin
            end = self.at if end == closing else end
        self.lone(src_at, raw, True, at, (begin, end))

    def pop(self, key: str, close: str) -> None:
        first, ends = self.open_tags(key), self.at - len(close)  # (where the closing starts)
        if not first or self.stack[first - 1][0] != key:
            raise Unreadable(f"{key} closes nothing open")
        head, tail, gaps = edge_pieces(self, first, close)  # (kept in its opening, closing)
        self.demote_all(first, ends)  # (the others crossed by the markup closed: lone tags)
        _, raw, start, order, src_at = self.stack.pop()
        self.keys[key] -= 1
        # `[label]`, `[label][]`: the words are the label, which rendering keeps
        label = self.src[src_at + 1 : ends] if key == "link" and close in ("]", "][]") else ""
        raw, close, ends = raw + head, tail + close, ends - len(tail)
        if not since(self.plain, self.size, start).strip():  # (its whitespace: in its raw)
            if self.size > start:
                self._drop(start, self.size - start)
            # <a id="x"></a>, **<br>**, [ ](u): markup holding no words, glued as a lone
            # piece; the pieces placed inside it are in its raw (taken out: not written twice)
            for k in range(len(self.spans) - 1, -1, -1):
                if self.spans[k][0] < start:
                    break
                if self.spans[k][2] is not None and self.spans[k][2].src >= src_at:
                    self.spans[k] = (start, start, None)
                    if k in self.lones.bounds:
                        self.lones.take(k)
            self.lone(src_at, self.src[src_at : self.at], True)  # (it may take a space)
            return
        start, end, raw, close, held = edges(self, start, raw, close, gaps)
        mark = Mark("pair", raw, close, order, label=label, src=src_at, close_src=ends)
        self._span(start, end, replace(mark, held=held))

    def _spaced(self, at: int) -> bool:
        return at >= len(self.src) or self.src[at].isspace()

    def _drop(self, at: int, n: int) -> None:
        """The plain text's `n` characters from `at` taken out, the spans and open markup
        after them moved back. Most drops are of the text's end, with nothing after them:
        those cost only what they remove (a paragraph of many tags stays linear)."""
        if self.pending is not None:  # (in order: one run with the last, where it follows it)
            if self.pending and sum(self.pending[-1]) == at:
                at, n = self.pending[-1][0], self.pending.pop()[1] + n
            self.pending.append((at, n))
            return
        if at + n == self.size:
            while n > (end := len(self.plain[-1])):
                n -= end
                self.plain.pop()
            self.plain[-1] = self.plain[-1][: end - n]
            n = self.size - at
        else:
            text = "".join(self.plain)
            self.plain = [text[:at] + text[at + n :]]
        self.size -= n
        del self.forms[at : at + n]

        def moved(p: int) -> int:
            return p - min(n, max(0, p - at))

        if self.reach > at:  # (else every span ends before the drop)
            self.spans = [(moved(a), moved(b), m) for a, b, m in self.spans]
            self.reach = moved(self.reach)
        for i in range(len(self.stack) - 1, -1, -1):  # positions grow along the stack
            if self.stack[i][2] <= at:
                break
            self.stack[i] = (*self.stack[i][:2], moved(self.stack[i][2]), *self.stack[i][3:])

    def demote_all(self, first: int, closing: int | None = None) -> None:
        """The open inline HTML tags from the stack's `first` on demoted, in their order.
        The whitespace each takes out is noted, and the text, spans and open markup are
        moved once, after the last: thousands of unclosed tags are read in linear time."""
        if len(self.stack) == first:
            return
        self.plain, self.pending = ["".join(self.plain)], []
        while len(self.stack) > first:
            self.demote(closing, first)
        drops, self.pending = self.pending, None
        if drops:
            self.plain, self.forms, moved = taken_out(self.plain[0], self.forms, drops)
            self.size = len(self.plain[0])
            self.spans = [(moved(a), moved(b), m) for a, b, m in self.spans]
            self.stack = [(k, raw, moved(at), *rest) for k, raw, at, *rest in self.stack]
            self.reach = moved(self.reach)

    def open_tags(self, key: str = "") -> int:
        """Where the open inline HTML tags on top of the stack (up to markup `key`) begin."""
        first = len(self.stack)
        while (
            first
            and self.stack[first - 1][0] != key
            and self.stack[first - 1][0].startswith("html:")
        ):
            first -= 1
        return first

    def _take_lead(self, at: int, run: int) -> int:
        """The whitespace (at most `run` characters) after plain position `at`, which a lone
        piece before the first word holds, taken out: how much."""
        if self.pending is None:
            text, start = since(self.plain, self.size, at), 0
        else:  # (past the whitespace taken out there, if any)
            text, start = self.plain[0], at
            if self.pending and at == self.pending[-1][0]:
                start = sum(self.pending[-1])
        n = 0
        while n < run and start + n < len(text) and text[start + n].isspace():
            n += 1
        if n:
            self._drop(at if self.pending is None else start, n)
        return n

    def _span(self, start: int, end: int, mark: Mark) -> None:
        self.spans.append((start, end, mark))
        self.reach = max(self.reach, end)

    def lone(
        self,
        src_at: int,
        raw: str,
        take_space: bool = False,
        at: int | None = None,
        around: tuple[int, int] | None = None,
        taken: int = 0,
    ):
        """A raw with no words (a lone tag, an autolink) put at plain position `at` (the end:
        what follows is unread) and glued as in the source: to the word after it when only
        that touches it, else to the word before it, with the whitespace between them;
        `take_space`: that whitespace is taken out of the plain text (else a sentence that
        keeps its spacing would have it twice); `around`: the source's stretch whose neighbours
        decide that gluing, where it is more than the raw (the markup around a tag); `taken`:
        the whitespace after it already taken out, by a piece it is joined with."""
        src, end = self.src, src_at + len(raw)
        ahead, at = at is None, self.size if at is None else at
        begin, after = around or (src_at, end)
        if (k := self.lones.beside(self.spans, src_at, end, at, self.pending)) is not None:
            # right beside another at the same place (`<span></span>[^1]`; tags left open
            # before pieces placed at once, `<i><br/>`): one piece, glued as both together
            a, b, gone = self.spans[k]
            self.spans[k] = (a, b, None)  # (taken out of the spans at the end of reading)
            first, last = self.lones.take(k)
            if gone.kind == "lead" and first == end:  # (the whitespace it took stays taken)
                taken = len(gone.raw) - (last - first)
            start, stop = min(first, src_at), max(last, end)
            glued = (min(first, begin), max(last, after))
            return self.lone(
                start, src[start:stop], take_space, None if ahead else at, glued, taken
            )
        spaced_before = begin == 0 or src[begin - 1].isspace()
        spaced_after = self._spaced(after)
        floor = sum(self.pending[-1]) if self.pending else -1  # (a word was there before)
        worded, ends_in = ending(self.plain, self.size, at, floor)
        if not worded:  # before the first word: with the whitespace after it
            run = len(src[end:]) - len(src[end:].lstrip())
            run = run if run < len(src) - end else 0  # (none: nothing follows)
            if ahead:  # (taken out of the text read after it)
                self.trim = run
            else:
                run = taken + self._take_lead(at, run - taken)
            mark = Mark("lead", raw + src[end : end + run], src=src_at)
        elif spaced_before and not spaced_after:
            mark = Mark("before", raw, src=src_at)
        elif not spaced_before and not spaced_after:  # s3.<region>.com, (<a@b.c>)
            mark = Mark("inside", raw, src=src_at)
        else:  # (right after a pair holding the separator, which no word follows now)
            at = at if spaced_before else released(self, at, ends_in)
            space = ends_in if spaced_before and take_space else ""
            # (only the whitespace after markup opened before it and still open: that before
            # the markup is its own)
            opened = bisect_left(self.stack, src_at, key=lambda entry: entry[4])
            if opened and (cut := at - self.stack[opened - 1][2]) < len(space):
                space = space[len(space) - cut :]
            if space:
                self._drop(at - len(space), len(space))
                at -= len(space)
            mark = Mark("after", (space or (" " if spaced_before else "")) + raw, src=src_at)
        self._span(at, at, mark)
        self.lones.add(len(self.spans) - 1, src_at, end)

    def atom(self, start: int, words: str, code: bool = False) -> None:
        """An atom whose `words` the model reads; `code`: a code span, `words` its content."""
        raw = self.src[start : self.at]
        lead, trail = held_code(self, start, words) if code else ("", "")
        words = words.strip()  # `-1 `,: the space is the code's, the comma glued to it
        if not words:
            self.lone(start, raw, True)
            return
        self.add(lead)  # (its word's separator from the word before, which its raw holds)
        at = self.size
        self.add(words)
        self._span(at, self.size, Mark("atom", raw, text=words, src=start, held=(lead, "")))
        self.trail = trail

    def child(self, tok, skipping: bool) -> bool:
        """Read one child token; True while inside an autolink (its text is in the atom)."""
        src, kind = self.src, tok.type
        if skipping:
            return kind != "link_close"
        if kind == "text":
            self.text(tok.content)
        elif kind in ("softbreak", "hardbreak"):
            m = _BREAK.match(src, self.at)
            if m is None:
                raise Unreadable(f"no line break at {self.at}")
            if m.group(1):  # a backslash break: the backslash stays after the word
                self.at = m.start(1) + 1
                self.lone(m.start(1), "\\", True)  # (it may take the space before it)
            self.add(src[self.at if m.group(1) else m.start() : m.end()])
            self.at = m.end()
        elif kind.endswith("_open") and kind[:-5] in PAIRS:
            self.at = expect(src, self.at, tok.markup)
            self.push(kind[:-5], tok.markup)
        elif kind.endswith("_close") and kind[:-6] in PAIRS:
            self.at = expect(src, self.at, tok.markup)
            self.pop(kind[:-6], tok.markup)
        elif kind == "link_open" and tok.markup in ("autolink", "linkify"):
            start = self.at
            self.at = (src.index(">", self.at) + 1) if src.startswith("<", start) else (
                match_text(src, start, tok.attrs.get("href", "")))  # fmt: skip
            self.atom(start, "")
            return True
        elif kind == "link_open":
            self.at = expect(src, self.at, "[")
            self.push("link", "[")
        elif kind == "link_close":
            start = self.at
            self.at = destination(src, self.at)
            self.pop("link", src[start : self.at])
        else:
            self.leaf(tok)
        return False

    def text(self, content: str) -> None:
        """A text token's content: its words added, its extension pieces (_EXTENSION, a
        box at the inline's start) glued where they stand as pieces with no words."""
        at = 0
        found = list(_EXTENSION.finditer(content))
        if self.size == 0 and (box := _BOX.match(content)):
            found.insert(0, box)
        for m in found:
            if m.start() < at:
                continue
            self._words(content[at : m.start()])
            start, self.at = self.at, match_text(self.src, self.at, m.group())
            self.lone(start, self.src[start : self.at], True)
            at = m.end()
        self._words(content[at:])

    def _words(self, text: str) -> None:
        """Decoded text read along the source, each character as it was written there."""
        if text:
            forms: list[str] = []
            end = match_text(self.src, self.at, text, forms)
            self.add(text, forms)
            self.at = end

    def leaf(self, tok) -> None:
        src, start = self.src, self.at
        if tok.type == "code_inline":
            self.at = expect(src, start, tok.markup)
            end = src.find(tok.markup, self.at)
            if end < 0:
                raise Unreadable("unclosed code span")
            self.at = end + len(tok.markup)
            self.atom(start, tok.content, True)
        elif tok.type in ("math_inline", "math_inline_double"):  # $x$, $$x$$: kept as code is
            self.at = expect(src, start, tok.markup + tok.content + tok.markup)
            self.atom(start, tok.content)
        elif tok.type == "image":
            self.at = balanced(src, expect(src, start, "!"), "[", "]") - 1
            self.at = destination(src, self.at)
            self.atom(start, tok.content)
        elif tok.type == "html_inline":
            self.at = expect(src, start, tok.content)
            opening, closing = _OPEN_TAG.match(tok.content), _CLOSE_TAG.match(tok.content)
            if opening:
                self.push("html:" + opening.group(1).lower(), tok.content)
            elif closing and self.keys["html:" + closing.group(1).lower()]:
                self.pop("html:" + closing.group(1).lower(), tok.content)
            else:
                self.atom(start, "")
        else:
            raise Unreadable(f"inline token {tok.type}")


def read_inline(src: str, children) -> tuple[str, list, Escapes] | None:
    """(plain text, [(start, end, Mark)] character spans of it, how the source escaped its
    characters) of an inline whose source text is `src`; None when its tokens cannot be
    followed along `src`."""
    reader, skipping = _Reader(src), False
    try:
        for tok in children:
            held_after(reader, tok)
            skipping = reader.child(tok, skipping)
            reader.last = tok.type
        reader.demote_all(reader.open_tags())  # (left open at the end: lone tags after all)
        if reader.stack:
            raise Unreadable("unclosed markup")
        if src[reader.at :].strip():
            raise Unreadable(f"text left at {reader.at}")
    except (Unreadable, ValueError):
        return None
    plain = "".join(reader.plain) + src[reader.at :]
    forms = reader.forms + list(src[reader.at :])
    kept = [span for span in reader.spans if span[2] is not None]  # (less those joined)
    kept.sort(key=lambda span: (span[0], span[1], span[2].src))  # (ties: as written)
    code = {p for a, b, m in kept if m.kind == "atom" for p in range(a, b)}
    spans = [glued(plain, span, code) for span in kept]
    return plain, spans, Escapes.of(plain, forms, code)
