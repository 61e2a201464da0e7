"""Markdown: `translate_markdown(text, translate, lang)`.

The document is parsed by markdown-it-py (CommonMark with tables and strikethrough, and
mdit-py-plugins' $ math, admonitions, definition lists and MyST's ::: fences); the text of
headings, paragraphs, list items, block quotes, table cells, admonitions and definitions,
and of MyST directives that hold prose (_PROSE; their titles where _TITLED), is
translated and written back into the source lines it came from, so everything else (block
markers, indentation, code blocks, math blocks, HTML blocks, link reference definitions,
front matter, blank lines) stays byte for byte. Inside that text the inline markup keeps its source form and
follows the words it wrapped (markdown_inline.py, inline.transfer). Each inline is split
into sentences; sentences that one piece of markup spans are translated together.
"""

from __future__ import annotations

import logging
import re
from dataclasses import replace
from functools import cache

from translator.documents.inline import MAX_NESTING, deepest, nesting
from translator.documents.markdown_blocks import unblocked
from translator.documents.markdown_held import unheld_gaps
from translator.documents.markdown_inline import read_inline
from translator.documents.markdown_marks import Mark
from translator.documents.markdown_render import render
from translator.documents.text import replace_spans
from translator.documents.units import Marked, Translate, translate_all

log = logging.getLogger(__name__)
_FRONT_MATTER = re.compile(r"(?:---|\+\+\+)[ \t]*\r?\n")


@cache  # (one parser serves every document: parsing leaves it as it was)
def _parser():
    from markdown_it import MarkdownIt
    from mdit_py_plugins.admon import admon_plugin
    from mdit_py_plugins.colon_fence import colon_fence_plugin
    from mdit_py_plugins.deflist import deflist_plugin
    from mdit_py_plugins.dollarmath import dollarmath_plugin

    md = MarkdownIt("commonmark").enable(["table", "strikethrough"])
    # $ opens math only before a non-space and closes it only after one, not before a
    # digit, as pandoc reads it: prices ("$5 and $10") stay prose
    md.use(dollarmath_plugin, allow_space=False, allow_digits=False)
    return md.use(admon_plugin).use(deflist_plugin).use(colon_fence_plugin)


# MyST directives (```{name} or :::{name}) whose body is Markdown prose; any other (code,
# math, raw, toctree, unknown ones) is kept as written
_PROSE = {
    "admonition", "attention", "caution", "danger", "error", "hint", "important", "note",
    "seealso", "tip", "warning", "dropdown", "margin", "sidebar", "topic", "epigraph",
    "pull-quote", "highlights", "tab-set", "tab-item", "card", "grid", "grid-item",
    "grid-item-card", "div", "figure", "table", "versionadded", "versionchanged",
    "deprecated",
}  # fmt: skip
# and those whose argument (the rest of the opening line) is a title
_TITLED = {"admonition", "dropdown", "tab-item", "topic", "sidebar", "card", "grid-item-card",
           "table", "rubric"}  # fmt: skip
_DIRECTIVE = re.compile(r"\{([A-Za-z][\w.:-]*)\}[ \t]*(.*)")
_OPTION = re.compile(r"[ \t]*:[\w.-]+:")


def _directive_text(tok) -> str:
    """The parts of a fence `tok` to read as Markdown, as a document of the same line
    numbers: a MyST directive's title and its body less its options, a pandoc div's body
    (::: and no {name}); "" for any other."""
    found = _DIRECTIVE.fullmatch(tok.info.strip())
    if tok.map is None or (found is None and tok.type == "fence"):
        return ""
    name, title = found.groups() if found else ("div", "")
    first = tok.map[0]
    text = "\n" * first + (title if name in _TITLED else "") + "\n"
    if name not in _PROSE:
        return text
    body = tok.content.splitlines(keepends=True)
    skip = 0
    if body and body[0].strip() == "---":  # options as a YAML block
        skip = next((k + 1 for k in range(1, len(body)) if body[k].strip() == "---"), 0)
    while skip < len(body) and _OPTION.match(body[skip]):  # options as :key: lines
        skip += 1
    return text + "\n" * skip + "".join(body[skip:])


def _tokens(md, text: str):
    """The tokens of `text`, a MyST directive's followed by those of its title and body."""
    for tok in md.parse(text):
        yield tok
        if tok.type in ("fence", "colon_fence") and (inner := _directive_text(tok)):
            yield from _tokens(md, inner)


def front_matter_lines(lines: list[str]) -> int:
    """How many lines a YAML (---) or TOML (+++) front matter block opens the file with."""
    if not lines or not _FRONT_MATTER.fullmatch(lines[0]):
        return 0
    fence = lines[0].strip()
    for k in range(1, len(lines)):
        if lines[k].strip() == fence:
            return k + 1
    return 0


def _locate(lines: list[str], tok, cursors: dict[int, int], cell: bool):
    """[(line, start, end)] where each line of the inline `tok` stands in the source lines,
    or None when one is not found there as written."""
    places = []
    for k, part in enumerate(tok.content.split("\n")):
        row = tok.map[0] + k
        if row >= len(lines):
            return None
        line = lines[row].rstrip("\r\n")
        if cell:  # a cell's text comes with its escaped pipes (\|) read as pipes
            part = part.replace("|", "\\|")
        at = line.find(part, cursors.get(row, 0)) if cell else line.rfind(part)
        if at < 0:
            return None
        places.append((row, at, at + len(part)))
    return places


class _Inline(Marked):
    """One inline: where its lines stand in the source, its plain text and markup."""

    def __init__(self, places, cell: bool, plain: str, spans, escapes, lang):
        self.gave_up: set[Mark] = set()  # (noted by joins while the spans are uncrossed)
        super().__init__(plain, spans, lang)
        self.places, self.escapes, self.cell = places, escapes, cell
        self.paragraph = ""  # a paragraph's source, whose first line may not start a block
        if self.gave_up:
            self.spans = [[(s, e, replace(m, shared=True) if m in self.gave_up else m)
                           for s, e, m in unit] for unit in self.spans]  # fmt: skip

    def joins(self, a, b) -> bool:
        if a.kind == b.kind == "atom":
            return True  # render puts atoms sharing words side by side
        self.gave_up.add(b)  # (b gives up the word it shares with a)
        return False

    def rendered(self, results) -> str:
        rendered = [render(words, seps, placed, self.escapes)
                    for words, seps, placed, _ in self.placed(results)]  # fmt: skip
        pieces, edges = [text for text, _ in rendered], [edges for _, edges in rendered]
        written = unheld_gaps(self.escapes.written, self.plain, self.units, edges)
        text = replace_spans(written, self.units, pieces)  # (&nbsp; stays so)
        if self.paragraph:
            text = unblocked(_parser(), text, self.paragraph)
        # a pipe in a table cell is written escaped, or it would end the cell
        return text.replace("|", "\\|") if self.cell else text


def _inlines(text: str, lang) -> tuple[list[str], list[_Inline]]:
    # the lines as markdown-it counts them: a form feed or \u2028 does not end one
    lines = [line for line in re.split(r"(?<=\n)|(?<=\r)(?!\n)", text) if line]
    skip = front_matter_lines(lines)
    parsed = "\n" * skip + "".join(lines[skip:])  # the same line numbers, no front matter
    found, cursors = [], {}
    cell = title = para = False
    for tok in _tokens(_parser(), parsed):
        cell = tok.type in ("th_open", "td_open") or (cell and tok.type == "inline")
        # (a setext heading's text is read as a paragraph's until its underline)
        setext = tok.type == "heading_open" and tok.markup in ("=", "-")
        para = tok.type == "paragraph_open" or setext or (para and tok.type == "inline")
        title = tok.type == "admonition_title_open" or (title and tok.type == "inline")
        if tok.type != "inline" or tok.map is None or not tok.content.strip():
            continue
        if title and f'"{tok.content}"' not in lines[tok.map[0]]:
            continue  # an admonition's title made from its kind (!!! note: "Note")
        places = _locate(lines, tok, cursors, cell)
        read = read_inline(tok.content, tok.children or []) if places else None
        try:  # (markup read as crossing spans, such as a lone tag closing emphasis)
            depth = deepest(nesting(read[1])) if read is not None else 0
        except ValueError:
            read = None
        if read is None or depth > MAX_NESTING:
            why = "" if read is None else f" (markup nested {depth} deep)"
            log.warning("line %d: Markdown inline left untranslated%s", tok.map[0] + 1, why)
            continue
        for row, _, end in places:
            cursors[row] = end
        inline = _Inline(places, cell, *read, lang)
        inline.paragraph = tok.content if para else ""
        if inline.sources:  # (markup without words, such as a bare <https://...>, stays)
            found.append(inline)
    return lines, found


def translate_markdown(text: str, translate: Translate, lang: str | None = "en") -> str:
    """`text` with its prose translated and its Markdown kept (module docstring)."""
    # CommonMark reads a NUL as U+FFFD (as every renderer shows it), so the parser's
    # tokens are found in the lines only once they hold the same
    lines, inlines = _inlines(text.replace("\0", "\ufffd"), lang)
    # a unit whose letters are all code (an item `make test`) stays as written
    code = [c for i in inlines for c in i.letterless(("atom",))]
    results = iter(translate_all([s for i in inlines for s in i.sources], translate,
                                 {k for k, c in enumerate(code) if c}))  # fmt: skip
    edits: dict[int, list[tuple[int, int, str]]] = {}
    gone = set()
    for inline in inlines:
        new = inline.rendered([next(results) for _ in inline.sources]).split("\n")
        rows = inline.places
        if len(new) > len(rows):  # a line break inside a link's raw text: joined
            new = new[: len(rows) - 1] + [" ".join(new[len(rows) - 1 :])]
        for (row, start, end), part in zip(rows, new, strict=False):
            edits.setdefault(row, []).append((start, end, part))
        gone |= {row for row, _, _ in rows[len(new) :]}  # lines a short translation left
    for row, changes in edits.items():
        changes.sort()
        lines[row] = replace_spans(lines[row], [c[:2] for c in changes], [c[2] for c in changes])
    for row in gone:
        lines[row] = ""
    return "".join(lines)
