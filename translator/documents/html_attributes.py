"""The attributes of HTML elements that readers see (an image's alt text, a title shown on
hover, a field's placeholder, an accessible label), translated in place in their start
tag's source. Everything else in the tag, the quoting included, stays as it was; a value
whose translation is the same text keeps its bytes.

The attributes that name a language (lang, xml:lang, a content-language meta tag) on
elements whose content is translated name the target's, whatever they named: every word
there is now the model's (`retag_languages`); an element so retagged gets the target's
writing direction where its dir says otherwise (or, for a right-to-left target, nothing).
"""

from __future__ import annotations

import html
import re

from translator.documents.html_units import VERBATIM_BLOCK, VERBATIM_INLINE
from translator.documents.language import Retag
from translator.documents.units import Translate, translate_all

READ = frozenset({"alt", "title", "placeholder", "aria-label"})
LANG, DIR = frozenset({"lang", "xml:lang"}), frozenset({"dir"})
COPIED = VERBATIM_BLOCK | VERBATIM_INLINE  # elements whose content is copied
# name, "=", then a value in double or single quotes or none (HTML's unquoted form)
ATTRIBUTE = re.compile(r"""(?<=\s)([^\s"'>/=]+)\s*=\s*("[^"]*"|'[^']*'|[^\s"'=<>`]+)""")


def values(raw: str, names: frozenset[str]) -> list[tuple[str, int, int, str]]:
    """(name, start, end, text) of each attribute of `names` in a start tag's source `raw`:
    its lowercased name, the characters between its quotes, and their text with character
    references resolved."""
    out = []
    for m in ATTRIBUTE.finditer(raw):
        if (name := m.group(1).lower()) in names:
            a, b = m.span(2)
            if raw[a] in "\"'":
                a, b = a + 1, b - 1
            out.append((name, a, b, html.unescape(raw[a:b])))
    return out


def readable(raw: str) -> list[tuple[int, int, str]]:
    """(start, end, text) of each READ attribute's value in a start tag's source `raw`."""
    return [(a, b, text) for _, a, b, text in values(raw, READ)]


def _written(raw: str, a: int, b: int, text: str) -> str:
    """`raw` with the value at [a, b) replaced by `text`, escaped for the value's quotes."""
    text = text.replace("&", "&amp;")
    quote = raw[a - 1] if raw[a - 1] in "\"'" else ""
    if quote:
        return raw[:a] + text.replace(quote, "&#39;" if quote == "'" else "&quot;") + raw[b:]
    return raw[:a] + '"' + text.replace('"', "&quot;") + '"' + raw[b:]


def translate_attributes(toks: list, carriers: list[int], translate: Translate) -> bool:
    """Translate the READ attributes of the start tags `toks[i]` for i in `carriers`, in one
    call of `translate`, rewriting their source (`raw`); whether any was there."""
    found = [(i, readable(toks[i].raw)) for i in carriers]
    found = [(i, spans) for i, spans in found if spans]
    if not found:
        return False
    results = iter(translate_all([v for _, spans in found for *_, v in spans], translate))
    for i, spans in found:
        raw = toks[i].raw
        done = [(a, b, v, next(results)[0]) for a, b, v in spans]
        for a, b, value, text in reversed(done):  # from the end: earlier offsets hold
            if text != " ".join(value.split()):
                raw = _written(raw, a, b, text)
        toks[i].raw = raw
    return True


def _retagged(tok, retag: Retag) -> str:
    """The start tag `tok`'s source with its language attributes renamed (module
    docstring)."""
    attrs = {k: (v or "").lower() for k, v in tok.attrs}
    names = LANG | ({"content"} if attrs.get("http-equiv") == "content-language" else set())
    found = values(tok.raw, names)
    if not found:
        return tok.raw
    edits = [(a, b, retag.target) for _, a, b, _ in found]  # (start, end, value written)
    direction, now = retag.direction, attrs.get("dir")
    if found[0][0] != "content" and now in ("ltr", "rtl") and now != direction:
        edits += [(a, b, direction) for _, a, b, _ in values(tok.raw, DIR)[:1]]
    elif found[0][0] != "content" and "dir" not in attrs and direction == "rtl":
        end = found[0][2] + (tok.raw[found[0][1] - 1] in "\"'")  # after its closing quote
        edits.append((end, end, None))
    raw = tok.raw
    for a, b, value in sorted(edits, key=lambda e: -e[0]):  # from the end: earlier offsets hold
        if value is None:
            raw = raw[:a] + f' dir="{direction}"' + raw[a:]
        else:
            raw = _written(raw, a, b, value)
    return raw


def retag_languages(toks: list, carriers: list[int], retag: Retag | None) -> bool:
    """Rename the language of the start tags `toks[i]` for i in `carriers` whose content is
    translated (module docstring); whether any changed."""
    changed = False
    for i in carriers if retag is not None else ():
        tok = toks[i]
        if tok.tag not in COPIED and (new := _retagged(tok, retag)) != tok.raw:
            tok.raw, changed = new, True
    return changed
