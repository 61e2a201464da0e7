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
