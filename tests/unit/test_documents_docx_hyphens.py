"""Word files: no-break and soft hyphens (w:noBreakHyphen, w:softHyphen) written back where
they stood in each word the translation keeps, whatever the word's punctuation and runs."""

import io

import docx
from docx.oxml import parse_xml
from docx.oxml.ns import nsdecls, qn
from fake_translate import reverse, same, upper

from translator.documents.docx import translate_docx


def _translated(xml: str, translate) -> list[str]:
    """The children of the runs of a paragraph of runs `xml` (in the w namespace), once
    translated: a text by its text, anything else by its tag."""
    d = docx.Document()
    d.element.body.insert(0, parse_xml(f"<w:p {nsdecls('w')}>{xml}</w:p>"))
    data = io.BytesIO()
    d.save(data)
    out = docx.Document(io.BytesIO(translate_docx(data.getvalue(), translate, "de")))
    p = out.paragraphs[0]._p
    return [el.text if el.tag == qn("w:t") else el.tag.split("}")[1]
            for r in p.iter(qn("w:r")) for el in r if el.tag != qn("w:rPr")]  # fmt: skip


def _t(text: str) -> str:
    return f'<w:t xml:space="preserve">{text}</w:t>'


def test_a_soft_hyphen_after_punctuation_at_a_words_edge_is_kept():
    xml = ("<w:r>" + _t("Ein Haus.") + "<w:softHyphen/>" + _t(" Der Mann (") + "<w:softHyphen/>"
           + _t("spielt), gut,") + "<w:softHyphen/></w:r><w:r>" + _t("Tür,\u00ad Ende.")
           + "</w:r>")  # fmt: skip
    assert _translated(xml, same) == [
        "Ein Haus.", "softHyphen", " Der Mann (", "softHyphen", "spielt), gut,", "softHyphen",
        "Tür,\u00ad Ende.",
    ]  # fmt: skip
    assert _translated(xml, upper) == [
        "EIN HAUS.", "softHyphen", " DER MANN (", "softHyphen", "SPIELT), GUT,", "softHyphen",
        "TÜR,\u00ad ENDE.",
    ]  # fmt: skip
    # a word the translation moves takes its hyphen along
    assert _translated("<w:r>" + _t("Ein Haus,") + "<w:softHyphen/>" + _t(" ein Mann.")
                       + "</w:r>", reverse) == ["Mann. ein Haus,", "softHyphen", " Ein"]  # fmt: skip


def test_a_hyphen_in_a_word_over_two_runs_is_kept():
    bold = "<w:rPr><w:b/></w:rPr>"
    xml = ("<w:r>" + _t("Ein Ge") + "<w:softHyphen/>" + _t("sa") + "</w:r><w:r>" + _t("ng und E")
           + "<w:noBreakHyphen/></w:r><w:r>" + bold + _t("Mail") + "</w:r><w:r>"
           + _t(" hier.") + "</w:r>")  # fmt: skip
    assert _translated(xml, same) == ["Ein Ge", "softHyphen", "sang und E", "noBreakHyphen",
                                      "Mail", " hier."]  # fmt: skip
    assert _translated(xml, upper) == ["EIN GE", "softHyphen", "SANG UND E", "noBreakHyphen",
                                       "MAIL", " HIER."]  # fmt: skip


def test_each_word_keeps_its_own_hyphens_not_those_of_the_same_word_elsewhere():
    xml = ("<w:r>" + _t("Der Fußball, der Fuß") + "<w:softHyphen/>" + _t("ball und ein E-Mail,")
           + _t(" eine E") + "<w:noBreakHyphen/>" + _t("Mail - und -") + "</w:r>")  # fmt: skip
    assert _translated(xml, same) == [
        "Der Fußball, der Fuß", "softHyphen", "ball und ein E-Mail, eine E", "noBreakHyphen",
        "Mail - und -",
    ]  # fmt: skip
