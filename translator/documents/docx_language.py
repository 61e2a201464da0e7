"""A translated Word file's languages: Word checks spelling and picks fonts by the w:lang
of each run, its style and the document's defaults, so those of the translated parts,
the styles and the defaults name the target (with a region, as Word writes languages:
`de-DE`), whatever they named.

w:lang holds three languages: w:val for most text, w:eastAsia for Chinese, Japanese and
Korean characters, w:bidi for right-to-left scripts. w:val becomes the target; w:eastAsia
and w:bidi become it only where it is written in such a script. The theme's font languages
(settings, w:themeFontLang) and the file's own language (its core properties'
dc:language) follow the same rules.

Direction: where the source and the target are written in opposite directions (German
into Hebrew, Arabic into English), each translated paragraph takes the target's: w:bidi in
its properties (the paragraph's direction) and w:rtl in its runs' (the runs' reading
order), as Word writes them when one types in that language; so does each table holding
one (w:bidiVisual: its columns run from the right) and each section of the document
(w:bidi in its w:sectPr: its columns, gutter and page numbers do).
"""

from __future__ import annotations

from translator.documents.language import Retag, retag_for

_NS = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"
_RELS = "http://schemas.openxmlformats.org/officeDocument/2006/relationships/"
_CORE = "http://schemas.openxmlformats.org/package/2006/relationships/metadata/core-properties"
LANG, THEME = _NS + "lang", _NS + "themeFontLang"
VAL, EAST_ASIA, BIDI = _NS + "val", _NS + "eastAsia", _NS + "bidi"
PPR, RPR, RUN, RTL = _NS + "pPr", _NS + "rPr", _NS + "r", _NS + "rtl"
TBL, TBL_PR, SECT_PR = _NS + "tbl", _NS + "tblPr", _NS + "sectPr"
# what may follow w:bidi in a paragraph's properties and w:rtl in a run's (the schema's
# order, which Word checks)
_AFTER_BIDI = tuple("w:" + n for n in (
    "adjustRightInd snapToGrid spacing ind contextualSpacing mirrorIndents suppressOverlap jc "
    "textDirection textAlignment textboxTightWrap outlineLvl divId cnfStyle rPr sectPr "
    "pPrChange").split())  # fmt: skip
_AFTER_RTL = tuple("w:" + n for n in "cs em lang eastAsianLayout specVanish oMath".split())
_AFTER_VISUAL = tuple("w:" + n for n in (
    "tblStyleRowBandSize tblStyleColBandSize tblW jc tblCellSpacing tblInd tblBorders shd "
    "tblLayout tblCellMar tblLook tblCaption tblDescription tblPrChange").split())  # fmt: skip
_AFTER_SECTION = tuple("w:" + n for n in "rtlGutter docGrid printerSettings sectPrChange".split())


def _part(owner, reltype: str):
    """The part `owner` relates to by `reltype`, None where the file has none (python-docx
    would make a default one, which a translation has no reason to add)."""
    for rel in owner.rels.values():
        if rel.reltype == reltype and not rel.is_external:
            return rel.target_part
    return None


def _rename(el, retag: Retag, word: str) -> None:
    """One w:lang (or w:themeFontLang) element renamed."""
    if el.get(VAL) is not None:
        el.set(VAL, word)
    if retag.east_asian and el.get(EAST_ASIA) is not None:
        el.set(EAST_ASIA, word)
    if retag.direction == "rtl" and el.get(BIDI) is not None:
        el.set(BIDI, word)


def retag_docx(doc, parts: list, retag: Retag | None) -> None:
    """Rename the languages of the python-docx Document `doc`, whose translated XML
    elements are `parts` (module docstring)."""
    if retag is None:
        return
    word = retag.regional
    styles = _part(doc.part, _RELS + "styles")
    for root in parts + ([styles.element] if styles is not None else []):
        for el in root.iter(LANG):
            _rename(el, retag, word)
    settings = _part(doc.part, _RELS + "settings")
    if settings is not None:
        for el in settings.element.iter(THEME):
            _rename(el, retag, word)
    if _part(doc.part.package, _CORE) is not None and doc.core_properties.language:
        doc.core_properties.language = word


def _direct(props, tag: str, after: tuple[str, ...], on: bool) -> None:
    """Set the on/off property `tag` (w:bidi, w:rtl) of `props` (a pPr or rPr): present and
    on, or off (absent, or w:val="0" to override a style that turns it on)."""
    from docx.oxml import OxmlElement

    el = props.find(_NS + tag.split(":")[1])
    if on:
        if el is None:
            props.insert_element_before(OxmlElement(tag), *after)
        elif el.get(VAL) is not None:
            del el.attrib[VAL]
    elif el is not None:
        el.set(VAL, "0")


def turn_paragraphs(paragraphs: list, retag: Retag | None, source_lang: str | None) -> None:
    """Translated `paragraphs` (w:p elements) read in the target's direction where the
    source language's (None where unknown) was the other (module docstring)."""
    if retag is None or (source := retag_for(source_lang)) is None:
        return
    if retag.direction == source.direction:
        return
    rtl = retag.direction == "rtl"
    tables, roots = set(), set()
    for p in paragraphs:
        _direct(p.get_or_add_pPr(), "w:bidi", _AFTER_BIDI, rtl)
        tables.update(p.iterancestors(TBL))
        roots.add(p.getroottree().getroot())
        for run in p.iter(RUN):
            props = run.find(RPR)
            if rtl or (props is not None and props.find(RTL) is not None):
                _direct(run.get_or_add_rPr(), "w:rtl", _AFTER_RTL, rtl)
    for table in tables:
        props = table.find(TBL_PR)
        if props is not None:  # (the schema requires one: python-docx always reads it)
            _direct(props, "w:bidiVisual", _AFTER_VISUAL, rtl)
    for root in roots:
        for section in root.iter(SECT_PR):
            _direct(section, "w:bidi", _AFTER_SECTION, rtl)
