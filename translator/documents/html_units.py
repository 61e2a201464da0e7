"""HTML as tokens and units for translate_html (html.py).

The tokenizer is the standard library's html.parser with character references left as
they are: each token's source text is cut from the input by its position, so everything
outside translated text (tags with their quoting and attributes, bar those readers see:
html_attributes.py; comments, doctype, whitespace between blocks) is copied byte for
byte, which lxml and BeautifulSoup, building
a tree and writing it out again, do not promise. The builder checks that elements nest
(end tags HTML lets go unwritten excepted; where they do not, translate_html mends them as
a browser reads them and copies them as they are) and cuts the tokens into copied text and units:
text between two block edges, with its inline elements as marks at character offsets.
"""

from __future__ import annotations

import html
import logging
import re
from dataclasses import dataclass, field
from html.parser import HTMLParser

from translator.documents.html_pieces import collapse
from translator.documents.html_spelling import note
from translator.documents.html_stack import OpenStack
from translator.errors import UserError

log = logging.getLogger(__name__)

BLOCK = frozenset(
    "address article aside blockquote body br caption center col colgroup dd details dialog "
    "dir div dl dt fieldset figcaption figure footer form frame frameset h1 h2 h3 h4 h5 h6 "
    "head header hgroup hr html legend li link main menu meta nav noscript ol optgroup "
    "option p section select summary table tbody td tfoot th thead title tr ul".split()
)
VOID = frozenset(
    "area base br col embed hr img input link meta param source track wbr keygen".split()
)
VERBATIM_BLOCK = frozenset("pre script style textarea template".split())
VERBATIM_INLINE = frozenset("code kbd samp svg math".split())
# Elements whose text is not prose: inside a piece copied whole it is copied, not read.
UNREAD = frozenset("script style svg".split())
# Elements whose end tag HTML lets go unwritten, and the start tags that close each.
CLOSED_BY = {
    "p": BLOCK - {"br", "col", "link", "meta", "title"},
    "li": {"li"},
    "dt": {"dt", "dd"},
    "dd": {"dt", "dd"},
    "td": {"td", "th", "tr", "tbody", "tfoot"},
    "th": {"td", "th", "tr", "tbody", "tfoot"},
    "tr": {"tr", "tbody", "tfoot"},
    "thead": {"tbody", "tfoot"},
    "tbody": {"tbody", "tfoot"},
    "option": {"option", "optgroup"},
    "optgroup": {"optgroup"},
    "colgroup": BLOCK,
}
OPTIONAL_END = frozenset(CLOSED_BY) | {"html", "head", "body", "tfoot", "caption"}


@dataclass
class Token:
    kind: str  # start, end, startend, text, comment, decl
    raw: str
    at: tuple[int, int]  # line (1-based), column (0-based) where it starts
    tag: str = ""
    attrs: list = field(default_factory=list)


class _Lexer(HTMLParser):
    """Tokens with their exact source text: each handler records where its token starts,
    and the text up to the next token's start is its source."""

    def __init__(self):
        super().__init__(convert_charrefs=False)
        self.found: list[tuple[str, tuple[int, int], str, list]] = []

    def _add(self, kind, tag="", attrs=()):
        self.found.append((kind, self.getpos(), tag, list(attrs)))

    def handle_starttag(self, tag, attrs):
        self._add("start", tag, attrs)

    def handle_startendtag(self, tag, attrs):
        self._add("startend", tag, attrs)

    def handle_endtag(self, tag):
        self._add("end", tag)

    def handle_data(self, data):
        self._add("text")

    def handle_entityref(self, name):
        self._add("text")

    def handle_charref(self, name):
        self._add("text")

    def handle_comment(self, data):
        self._add("comment")

    def handle_decl(self, decl):
        self._add("decl")

    def handle_pi(self, data):
        self._add("decl")

    def unknown_decl(self, data):
        self._add("decl")


def tokens(text: str, strict: bool = True) -> list[Token]:
    """The tokens of `text`, whose raw texts joined give `text` back exactly; a tag left
    unfinished at the end is a UserError, or (not `strict`) copied as it is."""
    lexer = _Lexer()
    lexer.feed(text)
    lexer.close()
    starts = [0] + [m.end() for m in re.finditer("\n", text)]
    offsets = [starts[line - 1] + col for _, (line, col), _, _ in lexer.found]
    out = []
    for n, (kind, at, tag, attrs) in enumerate(lexer.found):
        raw = text[offsets[n] : offsets[n + 1] if n + 1 < len(offsets) else len(text)]
        if kind == "text" and raw == "<" and n + 1 < len(offsets):
            following = text[offsets[n + 1] : offsets[n + 1] + 1]
            if following.isalpha() or following in "!/?":
                where = f"line {at[0]}, column {at[1] + 1}: a tag that never ends"
                if strict:
                    raise UserError(where)
                log.warning("%s; copied as it is", where)
                return out + [Token("decl", text[offsets[n] :], at, None, [])]
        out.append(Token(kind, raw, at, tag, attrs))
    return out


@dataclass
class Mark:
    """An inline element inside a unit (or a piece copied whole: `atom`), at offsets of the
    unit's text; None where it opened or closes in another unit."""

    open_at: int | None
    close_at: int | None
    open_raw: str
    close_raw: str = ""
    parent: int | None = None
    atom: bool = False
    # token numbers of its two edges, to keep their order (an edge no tag writes: between)
    order: tuple[float, float] = (0, 0)
    raw_at: int = 0  # where its source begins in its unit's `raw`


@dataclass
class Unit:
    """Text between two unit boundaries: its pieces unescaped, its marks, its tokens' source
    (copied back as it is when the unit holds no words)."""

    text: list[str] = field(default_factory=list)
    marks: list[Mark] = field(default_factory=list)
    raw: list[str] = field(default_factory=list)
    length: int = 0
    spelled: dict[int, str | None] = field(default_factory=dict)  # (html_spelling.note)


@dataclass
class Open:
    tag: str
    at: tuple[int, int]
    unit: Unit | None = None  # an inline element: its unit and mark
    mark: int | None = None


def _where(at: tuple[int, int]) -> str:
    return f"line {at[0]}, column {at[1] + 1}"


class Builder:
    """Tokens into copied text and units, checking that elements nest."""

    def __init__(self, strict: bool = True):
        self.strict = strict  # elements that do not nest: a UserError, else mended
        self.out: list[str | Unit] = []
        self.stack = OpenStack()  # of Open
        self.unit: Unit | None = None
        self.verbatim: tuple[int, Mark | None] | None = None  # depth, atom (None: block)
        self.entities: dict[str, str] = {}
        self.n = 0
        self.carriers: list[int] = []  # start tags outside copied elements (their token numbers)

    def literal(self, raw: str, boundary: bool = True) -> None:
        if boundary:
            self.unit = None
        if self.out and isinstance(self.out[-1], str):
            self.out[-1] += raw
        else:
            self.out.append(raw)

    def current(self) -> Unit:
        if self.unit is None:
            self.unit = Unit()
            self.out.append(self.unit)
        return self.unit

    def add_text(self, raw: str) -> str:
        value = html.unescape(raw)
        if raw.startswith("&") and raw.endswith(";") and len(value) == 1:
            self.entities.setdefault(value, raw)
        unit = self.current()
        note(unit.spelled, unit.length, raw, value)
        unit.text.append(value)
        unit.length += len(value)
        return value

    def feed(self, tok: Token) -> None:
        self.n += 1
        if self.verbatim is not None:
            return self.feed_verbatim(tok)
        if tok.kind == "text":
            self.add_text(tok.raw)
            self.unit.raw.append(tok.raw)
        elif tok.kind in ("start", "startend"):
            self.start(tok)
        elif tok.kind == "end":
            self.end(tok)
        elif tok.kind == "comment" and self.unit is not None:
            self.atom(tok.raw)
        else:  # a comment between units, a doctype, a processing instruction
            self.literal(tok.raw, boundary=tok.kind != "comment")

    def atom(self, raw: str) -> Mark:
        unit = self.current()
        mark = Mark(unit.length, unit.length, raw, parent=self.parent(unit), atom=True)
        mark.order = (self.n, self.n)
        unit.marks.append(mark)
        unit.raw.append(raw)
        return mark

    def parent(self, unit: Unit) -> int | None:
        inline = self.stack.inline
        return inline[-1].mark if inline and inline[-1].unit is unit else None

    def start(self, tok: Token) -> None:
        tag, void = tok.tag, tok.kind == "startend" or tok.tag in VOID
        while self.stack and tag in CLOSED_BY.get(self.stack[-1].tag, ()):
            self.stack.pop()
        quiet = any(k == "translate" and (v or "").lower() == "no" for k, v in tok.attrs)
        if not quiet:
            self.carriers.append(self.n - 1)
        if tag in ("script", "style") and not void and self.unit is not None:
            # inside text: a piece copied whole the model never reads, not a block's edge
            self.stack.append(Open(tag, tok.at))
            self.verbatim = (len(self.stack), self.atom(tok.raw))
            self.stack.copying()
        elif tag in BLOCK or tag in VERBATIM_BLOCK:
            self.literal(tok.raw)
            if not void:
                self.stack.append(Open(tag, tok.at))
                if quiet or tag in VERBATIM_BLOCK:
                    self.verbatim = (len(self.stack), None)
                    self.stack.copying()
        elif void:
            self.atom(tok.raw)
        elif quiet or tag in VERBATIM_INLINE:
            self.stack.append(Open(tag, tok.at))
            self.verbatim = (len(self.stack), self.atom(tok.raw))
            self.stack.copying()
        else:
            unit = self.current()
            unit.marks.append(Mark(unit.length, None, tok.raw, parent=self.parent(unit),
                                   raw_at=len(unit.raw)))  # fmt: skip
            unit.marks[-1].order = (self.n, 0)
            unit.raw.append(tok.raw)
            self.stack.append(Open(tag, tok.at, unit, len(unit.marks) - 1))

    def pop_to(self, tok: Token) -> Open | None:
        """The open element `tok` ends (None: none), and those it closes on its way (end
        tags HTML lets go unwritten); anything else left open is mended (`mend`)."""
        if not self.stack.holds(tok.tag):
            self.mend(f"{_where(tok.at)}: </{tok.tag}> closes no open element", "copied as it is")
            return None
        while self.stack[-1].tag != tok.tag:
            left = self.stack.pop()
            if left.tag not in OPTIONAL_END:
                self.mend(
                    f"{_where(tok.at)}: </{tok.tag}> while <{left.tag}> of {_where(left.at)}"
                    " is open",
                    f"<{left.tag}> taken to end there",
                )
                self.close_unwritten(left, self.n - 0.5)  # before the end tag read
        return self.stack.pop()

    def mend(self, what: str, how: str) -> None:
        """Markup that does not nest: a UserError when strict, else a warning and `how`
        it is read (as a browser would read it, and copied as it is)."""
        if self.strict:
            raise UserError(what)
        log.warning("%s; %s", what, how)

    def close_unwritten(self, left: Open, edge: float) -> None:
        """An inline element the source never closes, ended where its unit stands now
        (with no end tag written, as in the source); `edge`: its end's place among the
        tokens."""
        if left.mark is not None and left.unit is not None:
            mark = left.unit.marks[left.mark]
            mark.close_at, mark.order = left.unit.length, (mark.order[0], edge)

    def end(self, tok: Token) -> None:
        if not self.stack.holds(tok.tag) and (
            tok.tag in VOID or tok.tag in OPTIONAL_END
        ):  # </br> is a line break; a stray </p> (after a list that closed its p) browsers
            # read as an empty paragraph: both copied as they are, as unit edges
            return self.literal(tok.raw, boundary=tok.tag in BLOCK)
        closed = self.pop_to(tok)
        if closed is None:  # an end tag that closes nothing: kept where it stands
            return self.atom(tok.raw) if self.unit is not None else self.literal(tok.raw)
        if closed.mark is None:
            return self.literal(tok.raw)
        unit = self.current()
        if closed.unit is unit:
            mark = unit.marks[closed.mark]
            mark.close_at, mark.close_raw, mark.order = (
                unit.length,
                tok.raw,
                (mark.order[0], self.n),
            )
        else:  # opened in an earlier unit
            unit.marks.append(Mark(None, unit.length, "", tok.raw, order=(0, self.n)))
        unit.raw.append(tok.raw)
        if closed.unit is unit:
            sup = closed.tag == "sup" or self.stack.holds("sup")
            collapse(unit, closed.mark, sup)

    def feed_verbatim(self, tok: Token) -> None:
        depth, mark = self.verbatim
        if tok.kind == "start" and tok.tag not in VOID:
            self.stack.append(Open(tok.tag, tok.at))
        elif tok.kind == "end" and self.stack.holds_in_region(tok.tag):
            self.pop_to(tok)
            if len(self.stack) < depth:
                self.verbatim, self.stack.region = None, None
        if mark is None:
            return self.literal(tok.raw, boundary=False)
        mark.open_raw += tok.raw
        self.unit.raw.append(tok.raw)
        if tok.kind == "text" and not any(self.stack.holds_in_region(t) for t in UNREAD):
            self.add_text(tok.raw)
        if self.verbatim is None:
            mark.close_at = self.unit.length

    def finish(self) -> None:
        for left in self.stack:
            if left.tag not in OPTIONAL_END:
                self.mend(f"{_where(left.at)}: <{left.tag}> is never closed", "ended at the end")
                self.close_unwritten(left, self.n + 1)
        if self.verbatim is not None and self.verbatim[1] is not None:
            self.verbatim[1].close_at = self.unit.length  # inline code left open: all of it
