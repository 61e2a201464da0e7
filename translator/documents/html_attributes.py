"""The attributes of HTML elements that readers see (an image's alt text, a title shown on
hover, a field's placeholder, an accessible label), translated in place in their start
tag's source. Everything else in the tag, the quoting included, stays as it was; a value
whose translation is the same text keeps its bytes.
"""

from __future__ import annotations

import html
import re

from translator.documents.units import Translate, translate_all

READ = frozenset({"alt", "title", "placeholder", "aria-label"})
# name, "=", then a value in double or single quotes or none (HTML's unquoted form)
ATTRIBUTE = re.compile(r"""(?<=\s)([^\s"'>/=]+)\s*=\s*("[^"]*"|'[^']*'|[^\s"'=<>`]+)""")


def readable(raw: str) -> list[tuple[int, int, str]]:
    """(start, end, text) of each READ attribute's value in a start tag's source `raw`: the
    characters between its quotes, and their text with character references resolved."""
    out = []
    for m in ATTRIBUTE.finditer(raw):
        if m.group(1).lower() in READ:
            a, b = m.span(2)
            if raw[a] in "\"'":
                a, b = a + 1, b - 1
            out.append((a, b, html.unescape(raw[a:b])))
    return out


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
