"""A translated document names the target's language: the model's codes read as BCP 47
tags, HTML's lang (and dir) and Word's w:lang over translated text renamed whatever they
named, copied content's kept; no target, no change."""

import io
import re
import zipfile
from pathlib import Path

import docx
import pytest
from docx.oxml import OxmlElement
from docx.oxml.ns import qn

from translator.documents import translate_bytes
from translator.documents.language import bcp47, retag_for


def upper(sentences):
    return [(s.upper(), None) for s in sentences]


@pytest.mark.parametrize("code, tag", [
    ("deu_Latn", "de"), ("zho_Hant", "zh-Hant"), ("arb_Arab", "ar"), ("eng", "en"),
    ("pt_BR", "pt-BR"), ("de", "de"), ("mul", None), ("english", None), ("", None),
])  # fmt: skip
def test_model_codes_as_bcp47(code, tag):
    assert bcp47(code) == tag


def html(page: str, src="de", tgt="en") -> str:
    return translate_bytes(page.encode(), Path("p.html"), "html", upper, src, tgt).decode()


def test_html_names_the_target_over_translated_text():
    page = ('<html lang="de"><body><p lang="de-AT">Servus.</p><p lang="fr">Salut.</p>'
            '<pre lang="de">x</pre><span translate="no" lang="DE">y</span>'
            "<p xml:lang='de'>Ja.</p></body></html>")  # fmt: skip
    assert html(page) == (
        '<html lang="en"><body><p lang="en">SERVUS.</p><p lang="en">SALUT.</p>'
        '<pre lang="de">x</pre><span translate="no" lang="DE">y</span>'
        "<p xml:lang='en'>JA.</p></body></html>"
    )


def test_the_root_and_content_language_name_the_target():
    page = ('<html lang=fr><head><meta http-equiv="Content-Language" content="fr"></head>'
            "<p lang=fr>Hallo.</p></html>")  # fmt: skip
    assert html(page) == (
        '<html lang="en"><head><meta http-equiv="Content-Language" content="en"></head>'
        '<p lang="en">HALLO.</p></html>'
    )


def test_a_right_to_left_target_turns_the_retagged_elements():
    page = ('<html lang="de"><p lang="de" dir="ltr">A.</p><p lang="de" dir="auto">B.</p>'
            '<p dir="ltr">C.</p></html>')  # fmt: skip
    assert html(page, tgt="heb_Hebr") == (
        '<html lang="he" dir="rtl"><p lang="he" dir="rtl">A.</p><p lang="he" dir="auto">B.'
        '</p><p dir="ltr">C.</p></html>'
    )
    back = html('<html lang="he" dir="rtl"><p>X.</p></html>', src="he", tgt="de")
    assert back == '<html lang="de" dir="ltr"><p>X.</p></html>'


@pytest.mark.parametrize("tgt", [None, "mul"])
def test_without_a_target_language_no_tag_changes(tgt):
    page = '<html lang="de"><p lang="de">Hallo.</p></html>'
    assert html(page, tgt=tgt) == '<html lang="de"><p lang="de">HALLO.</p></html>'
    assert retag_for(tgt) is None


def _lang(run, **values):
    el = OxmlElement("w:lang")
    for k, v in values.items():
        el.set(qn(f"w:{k}"), v)
    run._r.get_or_add_rPr().append(el)


def _word(src, tgt, language="de-DE") -> dict[str, list[str]]:
    d = docx.Document()
    p = d.add_paragraph("Ein Hund läuft. ")
    _lang(p.add_run("Fett"), val="de-AT")
    _lang(p.add_run(" Bonjour."), val="fr-FR")
    d.core_properties.language = language
    buffer = io.BytesIO()
    d.save(buffer)
    out = translate_bytes(buffer.getvalue(), Path("d.docx"), "docx", upper, src, tgt)
    z = zipfile.ZipFile(io.BytesIO(out))
    found = {}
    for name in ["word/document.xml", "word/styles.xml", "word/settings.xml", "docProps/core.xml"]:
        text = z.read(name).decode()
        found[name] = re.findall(r"<w:(?:lang|themeFontLang) ([^>]*?)/>|<dc:language>([^<]*)", text)
        found[name] = ["".join(f) for f in found[name]]
    return found


def test_word_languages_follow_the_target():
    found = _word("de", "en")
    assert found["word/document.xml"] == ['w:val="en-US"', 'w:val="en-US"']
    # the defaults name the target whatever they named (python-docx's template: en-US)
    assert found["word/styles.xml"][0] == 'w:val="en-US" w:eastAsia="en-US" w:bidi="ar-SA"'
    assert found["docProps/core.xml"] == ["en-US"]
    japanese = _word("de", "jpn_Jpan")
    assert japanese["word/styles.xml"][0] == 'w:val="ja-JP" w:eastAsia="ja-JP" w:bidi="ar-SA"'
    assert japanese["word/settings.xml"] == ['w:val="ja-JP" w:eastAsia="ja-JP"']
    hebrew = _word("deu_Latn", "heb_Hebr")
    assert hebrew["word/styles.xml"][0] == 'w:val="he-IL" w:eastAsia="en-US" w:bidi="he-IL"'
    assert hebrew["word/document.xml"] == ['w:val="he-IL"', 'w:val="he-IL"']


def test_word_without_a_target_keeps_its_languages():
    found = _word("de", None)
    assert found["word/document.xml"] == ['w:val="de-AT"', 'w:val="fr-FR"']
    assert found["word/styles.xml"][0] == 'w:val="en-US" w:eastAsia="en-US" w:bidi="ar-SA"'
    assert found["docProps/core.xml"] == ["de-DE"]


def _directions(src, tgt, bidi: bool) -> list[str]:
    """The w:bidi and w:rtl of a translated two-paragraph file: a translated paragraph
    (right to left where `bidi`), then one of code alone."""
    d = docx.Document()
    p = d.add_paragraph("Ein Hund läuft. ")
    p.add_run("Fett").bold = True
    d.add_paragraph("42")
    if bidi:
        p._p.get_or_add_pPr().append(OxmlElement("w:bidi"))
        for run in p.runs:
            run._r.get_or_add_rPr().append(OxmlElement("w:rtl"))
    buffer = io.BytesIO()
    d.save(buffer)
    out = translate_bytes(buffer.getvalue(), Path("d.docx"), "docx", upper, src, tgt)
    text = zipfile.ZipFile(io.BytesIO(out)).read("word/document.xml").decode()
    return re.findall(r"<w:(?:bidi|rtl)[^>]*/>|<w:p\b", text)


def test_word_paragraphs_turn_to_the_target_direction():
    """Into Hebrew a translated paragraph reads right to left; back into English it reads
    left to right again, against a style that would say otherwise; same direction, or an
    unknown source, changes nothing."""
    turned = ["<w:p", "<w:bidi/>", "<w:rtl/>", "<w:rtl/>", "<w:p"]
    assert _directions("de", "he", False) == [*turned, "<w:bidi/>"]  # (the section's last)
    off = ['<w:bidi w:val="0"/>', '<w:rtl w:val="0"/>', '<w:rtl w:val="0"/>']
    assert _directions("he", "en", True) == ["<w:p", *off, "<w:p"]
    assert _directions("de", "en", False) == ["<w:p", "<w:p"]
    assert _directions("ar", "he", True) == turned
    assert _directions(None, "en", True) == turned
    word = docx.Document(io.BytesIO(_turned_file()))
    assert word.paragraphs[0].paragraph_format.alignment == 1  # the file still reads


def _turned_file() -> bytes:
    d = docx.Document()
    p = d.add_paragraph("Ein Hund läuft.")
    p.paragraph_format.alignment = 1  # w:jc, which must follow w:bidi
    p.paragraph_format.space_after = 0  # w:spacing, also after it
    buffer = io.BytesIO()
    d.save(buffer)
    out = translate_bytes(buffer.getvalue(), Path("d.docx"), "docx", upper, "de", "he")
    text = zipfile.ZipFile(io.BytesIO(out)).read("word/document.xml").decode()
    assert re.search(r"<w:pPr><w:bidi/><w:spacing[^>]*/><w:jc ", text), text
    return out


def _layout(src, tgt, turned: bool) -> str:
    """document.xml of a translated file with a table (read from the right where `turned`)
    and a section of its own direction; a header that names a start/end bookmark."""
    d = docx.Document()
    d.add_paragraph("Ein Hund läuft.")
    d.add_table(rows=1, cols=2).cell(0, 0).text = "Eine Katze."
    d.sections[0].header.paragraphs[0].text = "Kopf."
    section = d.sections[0]._sectPr
    if turned:
        d.tables[0]._tbl.tblPr.append(OxmlElement("w:bidiVisual"))
        section.append(OxmlElement("w:bidi"))
    section.append(OxmlElement("w:docGrid"))  # which must follow w:bidi
    buffer = io.BytesIO()
    d.save(buffer)
    out = translate_bytes(buffer.getvalue(), Path("d.docx"), "docx", upper, src, tgt)
    docx.Document(io.BytesIO(out))  # the file still reads
    return zipfile.ZipFile(io.BytesIO(out)).read("word/document.xml").decode()


def test_word_tables_and_sections_turn_with_their_paragraphs():
    hebrew = _layout("de", "he", False)
    assert re.search(r"<w:tblPr>(<w:tblStyle[^>]*/>)?<w:bidiVisual/><w:tblW ", hebrew), hebrew
    assert re.search(r"<w:bidi/><w:docGrid", hebrew), hebrew
    english = _layout("he", "en", True)
    assert '<w:bidiVisual w:val="0"/>' in english
    assert '<w:bidi w:val="0"/><w:docGrid' in english
    assert "bidiVisual" not in _layout("de", "en", False)
