"""HTML translated with its markup: `translate_html(text, translate, lang) -> str`.

Markup outside translated text is copied byte for byte (html_units.py says how).

Block elements (and br, hr) end a unit; a unit's text is split into sentences
(segment.py). Inline elements inside a sentence become spans over its words, carried to
the translation's words by its alignment (inline.py). code, kbd, samp, math and
elements marked translate="no" travel whole inside their sentence (the model sees their
text, their place follows its alignment); svg, and script or style among a unit's text,
travel whole unread, as an image does; pre, script, style, textarea and blocks marked
translate="no" elsewhere are copied and end a unit. The attributes readers see (alt, title,
placeholder, aria-label) are translated in their tags, and the language attributes name
the target's language (html_attributes.py).
"""

from __future__ import annotations

import logging
from bisect import bisect_left

from translator.documents.html_attributes import retag_languages, translate_attributes
from translator.documents.html_covered import beside, holds
from translator.documents.html_edges import Margins, in_word
from translator.documents.html_glue import in_trail, outside
from translator.documents.html_sentences import Sentence, sentences
from translator.documents.html_spelling import Spelling, escaper
from translator.documents.html_units import Builder, Mark, Unit, tokens
from translator.documents.inline import MAX_NESTING, deepest, events, transfer
from translator.documents.language import Retag
from translator.documents.units import GLUED, punctuation, target_seps, translate_all

log = logging.getLogger(__name__)


def _render(sentence: Sentence, unit: Unit, result, escape, margins: Margins) -> str:
    """A sentence's translation with its marks placed on the words aligned to theirs, and
    the source's line breaks inside it put back after the words aligned before them."""
    translation, alignment = result
    words = translation.split()
    placed = transfer(sentence.spans, sentence.text, translation, alignment, sentence.parents)
    seps = target_seps(sentence.text, translation, alignment) if words else []
    steps = events(placed, len(words), sentence.parents)
    following, upcoming = [], len(words)  # per event, the word it comes before
    for kind, k in reversed(steps):
        upcoming = k if kind == "word" else upcoming
        following.append(upcoming)
    covered: dict[int, list] = {}  # per word, the pieces copied whole over it: (text, words)
    for k, (text, *_) in sentence.atoms.items():
        for w in range(*placed[k][:2]):
            covered.setdefault(w, []).append((text, range(*placed[k][:2])))
    writer = _Writer(sentence, unit, words, escape, margins, covered)
    for (kind, k), ahead in zip(steps, reversed(following)):
        sep = escape(seps[ahead] if 0 < ahead < len(words) else " ") if writer.spaced else ""
        writer.event(kind, k, ahead, sep)
    return writer.text()


class _Writer:
    """The pieces of one rendered sentence, event by event (inline.events)."""

    def __init__(self, sentence: Sentence, unit: Unit, words: list[str], escape, margins, covered):
        self.sentence, self.unit, self.escape, self.margins = sentence, unit, escape, margins
        self.covered = covered  # per word, the pieces copied whole over it: theirs, not to cut
        self.words = list(words)  # text glued before a tag, written before it, is cut from its word
        self.out = list(sentence.head)
        self.spaced = False
        self.pending = ""  # text cut off the last word, for after the edges that stand before it
        self.last = None  # that word: (its place in out, the whitespace before it, the word)
        self.atom = None  # a piece copied whole being written: (its place, the words it covers)
        self.owned = None  # the spaces that piece's text ended in, if it was the last thing written
        self.held = None  # the place in out of a closing tag the next whitespace goes before
        self.gap = None  # the whitespace after an empty piece standing apart, for the next word
        self.piece = None  # the empty piece that held back `pending`, with what it held back
        # a span's end tag held for the lead of its sibling opening next (Sentence.shut)
        self.shut, self.shuts = None, {prev: k for k, (_, prev) in sentence.shut.items()}
        self.opens = {prev for _, prev in sentence.opened.values()}  # (Sentence.opened)
        self.spent = {}  # per span, the pieces of its trail a sibling opening apart wrote

    def event(self, kind: str, k: int, ahead: int, sep: str) -> None:
        mark = self.unit.marks[self.sentence.spans[k][2]] if kind != "word" else None
        if self.shut and not (
            kind == "open" and self.sentence.shut.get(k, (0, None))[1] == self.shut[0]
        ):
            self.out.append(self.shut[1])
            self.shut = None
        if kind == "close" and k in self.shuts and not self.pending:
            self.shut = (k, mark.close_raw)
            return
        if kind == "close" and k in self.sentence.trails:  # "hier</a>.": closes before the "."
            trail, word = self.sentence.trails[k], self.last[2] if self.last else ""
            if k in self.opens and _ends(word, trail):
                trail = word[len(word) - len(trail) :]  # (in any case: a sibling opens in it)
            own = self._own_trail() if k in self.sentence.bare_ends else ""
            kept = own if own and (_ends(own, trail) or not _ends(word, trail)) else trail
            self._keep(kept)
            if k in self.spent and kept == trail and self.pending.lower() == trail.lower():
                self.pending = outside(self.spent[k], self.pending)
            self.piece = (k, self.pending)  # (inside a parent it ends in: "<b><i>)</i>(a</b>")
            self.out.append(mark.close_raw)
            return
        if kind == "close" and k in self.sentence.bare_ends:  # "dog</b>." of "<b>hinter</b>"
            if self._glued_inside(k):  # "<b>x86_<wbr>64</b>": the word's rest is the element's
                self.out.append(self.escape(self.pending))
                self.pending = ""
            elif own := self._own_trail():
                self._keep(own)
            self.out.append(mark.close_raw)
            return
        if kind == "close" and k in self.sentence.after:  # (an empty piece: nothing to close)
            return
        if kind == "open" and k in self.sentence.after:  # "crates.io</a><!-- x -->."
            if self.sentence.after[k]:
                self._keep(self.sentence.after[k])
                self.piece = (k, self.pending)
            elif self.pending:  # at the word's end: after what another piece held back
                self.out.append(self.escape(self.pending))
                self.pending = ""
            self.out.append(mark.open_raw if mark.atom else mark.open_raw + mark.close_raw)
            return
        if kind == "open" and self._opens_in_trail(k):
            return
        if self.pending:
            self.out.append(self.escape(self.pending))
            self.pending = ""
        sep = self._held(sep) if kind in ("word", "open") and self.atom is None else sep
        if self.gap is not None and kind in ("word", "open"):
            sep, self.gap = self.gap, None
        if kind == "word":
            if self.atom is not None:
                self.atom[1].append(self.words[k])
            else:
                if self.owned:  # after a piece whose text ends in spaces ("<code># </code>,")
                    sep, self.owned = _less_own(sep, self.owned), None
                self.out.append(sep + self.escape(self.words[k]))
                self.last, self.spaced = (len(self.out) - 1, sep, self.words[k]), True
        elif kind == "open":
            self._open(k, mark, ahead, sep)
        elif self.atom is not None and k in self.sentence.atoms:
            self._close_atom(k, mark)
        else:  # (after the last word: with the whitespace before it in the source, Margins)
            ws = self.margins.closing(mark.close_at) if ahead == len(self.words) else ""
            self.out.append(ws + mark.close_raw)
            self.held = len(self.out) - 1 if k in self.sentence.spaced else None

    def _held(self, sep: str) -> str:
        """The whitespace to write before the next word or opening tag: none where it goes
        before a closing tag written last that held it in the source ("<a>Macro </a>X")."""
        held, self.held = self.held, None
        if held is None or held != len(self.out) - 1 or not sep:
            return sep
        self.out[held] = sep + self.out[held]
        return ""

    def _keep(self, rest: str) -> None:
        """Hold back `rest`, what the source has after the edge being written in its word,
        for after the edge: cut from the end of the text held back or of the word just
        written where either ends so ("x86_<wbr>64", "hier</a>."); text held back that does
        not end so stood before the edge and is written now."""
        held, n = self.pending, len(rest)  # (matched in any case: "1BC" of "1bc")
        ends = len(held) >= n and held[len(held) - n :].lower() == rest.lower()
        if ends and len(held) > n:
            self.out.append(self.escape(held[: len(held) - n]))
            self.pending = held[len(held) - n :]
        elif held and not ends:
            self.out.append(self.escape(held))
            self.pending = ""
        elif not held and self.last is not None and self.last[0] == len(self.out) - 1:
            at, sep, word = self.last
            if len(word) >= n and word[len(word) - n :].lower() == rest.lower():
                self.out[at] = sep + self.escape(word[: len(word) - n])
                self.pending = word[len(word) - n :]

    def _opens_in_trail(self, k: int) -> bool:
        """Whether span `k` opens in the text held back after its sibling's end tag, that
        sibling's trail as in the source (Sentence.opened): its start tag is written there."""
        pieces, prev = self.sentence.opened.get(k, ([], None))
        held = self.pending
        trail = self.sentence.trails.get(prev, "")
        if not held or self.piece != (prev, held) or held.lower() != trail.lower():
            return False
        self.out.append(in_trail(pieces, held, self.escape))
        self.pending = ""
        return True

    def _glued_inside(self, k: int) -> bool:
        """Whether the text held back is the rest of a word after an empty piece or a span
        inside span `k` (`64` of "<b>x86_<wbr>64</b>"): it is written before `k` closes."""
        if not self.pending or self.piece is None or self.piece[1] != self.pending:
            return False
        parent = self.sentence.parents[self.piece[0]]
        while parent is not None and parent != k:
            parent = self.sentence.parents[parent]
        return parent == k

    def _own_trail(self) -> str:
        """The punctuation the word just written ends in, where it has letters or digits
        before it and nothing else is held back (or it is, by an element inside ending
        there too: ")." of "(baa)." stays outside both of "<b><i>ba</i></b>a.")."""
        held = bool(self.pending) and self.piece is not None and self.piece[1] == self.pending
        if self.last is None or not held and (self.pending or self.last[0] != len(self.out) - 1):
            return ""
        _, core, trail = GLUED.match(self.last[2]).groups()
        return trail if core and (not held or self.pending == trail) else ""

    def _open(self, k: int, mark: Mark, ahead: int, sep: str) -> None:
        word = self.words[ahead] if ahead < len(self.words) else ""
        lead = self.sentence.leads.get(k, "")
        # "(<b>dog" of "<b>Hund" (and of "„<b>Hund"), but not of a word a piece stands for
        if k in self.sentence.bare_starts and ahead not in self.covered:
            own, core, _ = GLUED.match(word).groups()
            if core and (own.endswith(lead) or not word.lower().startswith(lead.lower())):
                lead = own
        glued = lead and word.lower().startswith(lead.lower()) and len(word) > len(lead)
        glued = glued and not self._needed(ahead, len(lead))
        shut, self.shut = self.shut, None
        if shut and not (glued and lead == self.sentence.leads.get(k)):
            self.out.append(shut[1])  # (before the word, where its text is not the source's)
            shut = None
        if glued:
            # "(<b>Hund": after "(" (in any case: "Copyright<a>" of "COPYRIGHTX")
            self.words[ahead] = word[len(lead) :]
            cut = self.sentence.shut[k][0] if shut else len(lead)
            head = (
                self.escape(word[:cut])
                + (shut[1] if shut else "")
                + self.escape(word[cut : len(lead)])
            )
            self.out.append(sep + head + mark.open_raw)
        elif k in self.sentence.apart and (
            sep == "".join(self.sentence.apart[k]) or (sep == " " and self.sentence.apart[k][1])
        ):  # "a <img> b": the source's whitespace split around it, not written on both sides
            # (and around a piece of whitespace, which parts the words itself, any one space)
            before, _, self.gap = self.sentence.apart[k]
            self.out.append(before + mark.open_raw)
        elif k in self.sentence.atoms:  # written whole when it closes, with its words' glue
            self.atom = (len(self.out), [])
            self.out.append(_less_own(sep, self.sentence.loose.get(k)))
        else:  # (with the tags that open in its sibling's trail, where that was not kept)
            pieces, prev = self.sentence.opened.get(k, ([(mark.open_raw, 0)], None))
            if prev is not None:  # its pieces' text is written here, not again in the trail
                self.spent[prev] = pieces
            raw = "".join(raw for raw, _ in pieces if raw is not None)
            split = self.sentence.split.get(k, ("", ""))
            at = len(split[0]) if sep == "".join(split) else len(sep)  # ("<a>\n DocBook")
            if sep or not self.margins.opening(self.out, len(self.sentence.head), mark, raw):
                self.out.append(sep[:at] + raw + sep[at:])
        # a piece copied whole stands for its words; one glued to the next word keeps it close
        self.spaced = (mark.atom or k in self.sentence.atoms) and k not in self.sentence.before

    def _needed(self, ahead: int, n: int) -> bool:
        """Whether the first `n` characters of word `ahead` hold text of a piece copied whole
        over it that its words lack without them ("!" of "!:" for `<code>!</code>`): the
        piece writes them, so a lead is not cut from there (it would write them twice)."""
        for text, span in self.covered.get(ahead, ()):
            words = [self.words[w] for w in span]
            cut = [w[n:] if at == ahead else w for at, w in zip(span, words)]
            if holds(words, text) and not holds(cut, text):
                return True
        return False

    def _close_atom(self, k: int, mark: Mark) -> None:
        """A piece copied whole (`code`) in place of the words it covers: where they hold its
        text, in place of that alone ("(", "):" around it kept), or scattered in them, beside
        what they hold beyond it; else with the text glued around it in the source."""
        at, covered = self.atom
        text, prefix, suffix, pieces = self.sentence.atoms[k]
        # (of its text's places in the words, the nearest to the source's)
        prefix, suffix = beside(covered, text, len(prefix)) or (prefix, suffix)
        source = "".join(piece if markup else self.escape(piece) for markup, piece in pieces)
        self.out[at] += self.escape(prefix) + source
        self.atom = None
        self.owned = self.sentence.tight.get(k)
        if punctuation(suffix):  # after the tags that close on it ("<code>x</code></a>.")
            self.pending = suffix
        else:  # (the word's end, for a piece glued after it to cut: "<code>x</code>y<img>z")
            self.out.append(self.escape(suffix))
            self.last = (len(self.out) - 1, "", suffix)

    def text(self) -> str:
        if self.shut:  # held for a sibling that opened before it (the words reordered)
            self.out.append(self.shut[1])
        head, tail = len(self.sentence.head), self.sentence.tail
        body = "".join(self.out[head:] + [self.escape(self.pending)])
        return "".join(self.out[:head]) + in_word(body, self.sentence, self.escape) + "".join(tail)


def _ends(text: str, end: str) -> bool:
    """Whether `text` ends in `end`, in any case ("AA," of "a,": the model may change it)."""
    return bool(end) and text[len(text) - len(end) :].lower() == end.lower()


def _less_own(sep: str, owned: tuple[str, bool] | None) -> str:
    """The whitespace `sep` beside a piece whose own text ends there in spaces (`owned`: those,
    and whether the source glued the piece to the word on that side): none where it was
    glued, else less the piece's spaces where it holds more (kept: the source's own)."""
    if owned is None:
        return sep
    own, glued = owned
    if glued:
        return ""
    return sep[len(own) :] if sep.startswith(own) and len(sep) > len(own) else sep


def translate_html(text: str, translate, lang: str | None, retag: Retag | None = None) -> str:
    """`text` (an HTML document or fragment) with its text translated by `translate`
    (sentences -> [(translation, alignment or None)]) and its markup kept; markup that
    does not nest is mended as a browser reads it, with a warning naming its line and
    column, and copied as it is. `retag`: how its language attributes change."""
    toks = tokens(text, strict=False)
    builder = build(toks, strict=False)
    named = translate_attributes(toks, builder.carriers, translate)
    if retag_languages(toks, builder.carriers, retag) or named:
        builder = build(toks, strict=False)  # the same units, with the start tags' new source
    plans = {id(p): _plan(p, lang) for p in builder.out if isinstance(p, Unit)}
    results = translate_all([s.text for plan, _ in plans.values() for s in plan], translate)
    escape, found, out = escaper(builder.entities), iter(results), []
    for piece in builder.out:
        if isinstance(piece, str):
            out.append(piece)
        elif not plans[id(piece)][0]:
            out.append("".join(piece.raw))
        else:
            out.append(_unit_text(piece, *plans[id(piece)], found, escape))
    return "".join(out)


def _plan(unit: Unit, lang: str | None):
    """The unit's sentences (html_sentences.sentences), or none where its markup nests
    deeper than prose does: it is then copied untranslated, with a warning."""
    plan, edges = sentences(unit, lang)
    depth = max((deepest(s.parents) for s in plan), default=0)
    if depth <= MAX_NESTING:
        return plan, edges
    start = next((m.open_raw for m in unit.marks if m.open_raw), "")[:40]
    log.warning("HTML text left untranslated: its markup nests %d deep (from %s)", depth, start)
    return [], edges


def build(toks, strict: bool = True) -> Builder:
    """The tokens fed to a Builder: HTML whose elements do not nest is a UserError, or (not
    `strict`) mended."""
    builder = Builder(strict)
    for tok in toks:
        builder.feed(tok)
    builder.finish()
    return builder


def _unit_text(unit: Unit, plan: list[Sentence], edges, found, escape) -> str:
    """The unit with each sentence translated and the whitespace around them kept, with
    the elements before the first sentence and after the last (`edges`) where they stood."""
    text, at, out = "".join(unit.text), 0, []
    spelling = Spelling(unit, text, escape)
    for sentence in plan:
        a, b = sentence.at
        result, margins = next(found), Margins(text, sentence.at, spelling.own, edges)
        marked, fill = spelling.sentence(a, b, sentence.text, result[0])
        rendered = fill(_render(sentence, unit, result, marked, margins))
        out += [_between(at, margins.lo, edges, spelling.own), rendered]
        at = margins.hi
    return "".join(out) + _between(at, len(text), edges, spelling.own)


def _between(lo: int, hi: int, edges, own) -> str:
    """The unit's text [lo:hi] as the source spells it (`own`), with the edges whose offsets
    fall in it written at their places (edges lie only before the first sentence and after
    the last)."""
    out, at = [], lo
    for n in range(bisect_left(edges, (lo,)), len(edges)):  # (sorted: those from lo on)
        offset, _, raw, end = edges[n]
        if offset > hi:
            break
        out += [own(at, offset), raw]
        at = min(end, hi)  # (past the text a piece copied whole writes itself)
    return "".join(out) + own(at, hi)
