"""The parts of a Word file that docx.py translates, and how it is opened: the XML
elements to translate (body, headers, footers), the styles for code, a run's or a
paragraph's style, and a file python-docx cannot open refused in one line.
"""

from __future__ import annotations

import io
import re
import zipfile

from translator.errors import UserError

_NS = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"


def _parts(doc):
    """The XML elements to translate: the body, each distinct header and footer."""
    seen, out = set(), [doc.element.body]
    for section in doc.sections:
        for hf in (section.header, section.footer, section.first_page_header,
                   section.first_page_footer, section.even_page_header,
                   section.even_page_footer):  # fmt: skip
            if not hf.is_linked_to_previous and id(hf._element) not in seen:
                seen.add(id(hf._element))
                out.append(hf._element)
    return out


# styles for code (pandoc's, Word's and common custom names): paragraphs in one are not
# translated, and runs in one are copied as they are where the translation changes them
CODE_PARAGRAPHS = {"source code", "html preformatted", "macro", "code", "verbatim", "preformatted"}
CODE_RUNS = {"verbatim char", "html code", "html keyboard", "html sample", "html typewriter",
             "code char", "source code char", "macro text char", "code", "inline code"}  # fmt: skip


def _code_styles(doc, kind: str, names: set[str]) -> frozenset[str]:
    """The ids of the styles of `kind` ("PARAGRAPH", "CHARACTER") that are, or are based on,
    a style named in `names` (in any case)."""
    from docx.enum.style import WD_STYLE_TYPE

    out = set()
    for style in doc.styles:
        if style.type != getattr(WD_STYLE_TYPE, kind):
            continue
        seen, at = set(), style
        while at is not None and at.style_id not in seen:
            seen.add(at.style_id)
            if (at.name or "").lower() in names:
                out.add(style.style_id)
                break
            at = at.base_style
    return frozenset(out)


def _style(el, kind: str = "r") -> str | None:
    """The style id of a run (`kind` "r") or a paragraph ("p"), None for none."""
    props = el.find(f"{_NS}{kind}Pr")
    style = None if props is None else props.find(f"{_NS}{kind}Style")
    return None if style is None else style.get(_NS + "val")


def _open(data: bytes, name: str):
    import docx

    if not zipfile.is_zipfile(io.BytesIO(data)):
        raise UserError(f"{name}: not a docx file (a docx is a zip archive)")
    try:
        doc = docx.Document(io.BytesIO(data))
    except Exception as err:  # python-docx raises several kinds for a zip that is no docx
        raise UserError(f"{name}: not a docx file ({_why(err)})") from None
    for part in doc.part.package.iter_parts():
        element = getattr(part, "_element", None)
        if element is not None:
            _refuse_dtd(element, part.partname, name)
    return doc


def _refuse_dtd(element, partname: str, name: str) -> None:
    """Refuse a part whose XML declares a DTD: its entities would be left undefined in the
    file written (lxml drops the DTD)."""
    if element.getroottree().docinfo.doctype:
        raise UserError(
            f"{name}: {partname} declares a DTD, which Office files never do",
            "open it in Word or LibreOffice and save it again",
        )


def _why(err: Exception) -> str:
    """What python-docx's error says of the file, without its internals (object ids)."""
    text = str(err)
    if isinstance(err, KeyError) and "[Content_Types].xml" in text:
        return "a zip without the [Content_Types].xml every Office file holds"
    kind = re.search(r"content type is '([^']+)'", text)
    if kind:
        return f"an Office file of another kind: {kind.group(1)}"
    return f"{type(err).__name__}: {re.sub(r' object at 0x[0-9a-f]+', '', text)}"
