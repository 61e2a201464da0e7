"""Word files: footnotes, endnotes and comments translated as the body is; runs inside a
tracked insertion, a smart tag or a content control translated with their sentence and
written back inside it; tabs and line breaks kept where the translation has no words."""

import io
import zipfile

import docx
import pytest
from docx.opc.constants import CONTENT_TYPE as CT
from docx.opc.constants import RELATIONSHIP_TYPE as RT
from docx.opc.packuri import PackURI
from docx.opc.part import Part
from docx.oxml import parse_xml
from docx.oxml.ns import nsdecls, qn
from fake_translate import reverse, same, upper
from lxml import etree

from translator.documents.docx import translate_docx

NS = nsdecls("w", "r")
NOTES = (
    '<w:{k}s {ns}><w:{k} w:type="separator" w:id="-1"><w:p><w:r><w:separator/></w:r><w:r><w:t>x</w:t></w:r></w:p>'
    '</w:{k}><w:{k} w:id="1"><w:p><w:r><w:{k}Ref/></w:r><w:r><w:t xml:space="preserve"> '
    "Ein Mann </w:t></w:r><w:r><w:rPr><w:b/></w:rPr><w:t>spielt</w:t></w:r><w:r><w:t "
    'xml:space="preserve"> Gitarre.</w:t></w:r></w:p></w:{k}></w:{k}s>'
)


def _with_notes() -> bytes:
    d = docx.Document()
    p = d.add_paragraph("Ein Satz")
    p._p.append(parse_xml(f'<w:r {NS}><w:footnoteReference w:id="1"/></w:r>'))
    p.add_run(" mit Fußnote.")
    for kind, ct, rt in (("footnote", CT.WML_FOOTNOTES, RT.FOOTNOTES),
                         ("endnote", CT.WML_ENDNOTES, RT.ENDNOTES)):  # fmt: skip
        blob = NOTES.format(k=kind, ns=NS).encode()
        d.part.relate_to(Part(PackURI(f"/word/{kind}s.xml"), ct, blob, d.part.package), rt)
    d.add_comment(d.paragraphs[0].runs, text="Ein Kommentar hier.", author="a")
    out = io.BytesIO()
    d.save(out)
    return out.getvalue()


def _paragraphs(data: bytes, name: str) -> list[tuple[str, list[str]]]:
    """Each paragraph of part `name`: its text, and the tags of its runs' children (b:
    a bold w:t)."""
    root = etree.fromstring(zipfile.ZipFile(io.BytesIO(data)).read(name))
    out = []
    for p in root.iter(qn("w:p")):
        tags = [("b" if r.find(f"{qn('w:rPr')}/{qn('w:b')}") is not None else c.tag.split("}")[1])
                for r in p.iter(qn("w:r")) for c in r if c.tag != qn("w:rPr")]  # fmt: skip
        out.append(("".join(t.text for t in p.iter(qn("w:t"))), tags))
    return out


def test_footnotes_endnotes_and_comments_are_translated_and_the_marks_stay():
    src = _with_notes()
    out = translate_docx(src, upper, "de")
    assert _paragraphs(out, "word/document.xml") == [
        ("EIN SATZ MIT FUSSNOTE.", ["t", "footnoteReference", "t", "commentReference"])]  # fmt: skip
    for kind in ("footnote", "endnote"):
        assert _paragraphs(out, f"word/{kind}s.xml") == [
            ("x", ["separator", "t"]), (" EIN MANN SPIELT GITARRE.", [f"{kind}Ref", "t", "b", "t"])]  # fmt: skip
    assert _paragraphs(out, "word/comments.xml") == [
        ("EIN KOMMENTAR HIER.", ["annotationRef", "t"])
    ]
    reversed_ = translate_docx(src, reverse, "de")
    assert _paragraphs(reversed_, "word/footnotes.xml")[1] == (
        " Gitarre. spielt Mann Ein", ["footnoteRef", "t", "b", "t"])  # fmt: skip
    for name in ("word/footnotes.xml", "word/endnotes.xml", "word/comments.xml"):
        assert _paragraphs(translate_docx(src, same, "de"), name) == _paragraphs(src, name)


def _one(xml: str, translate=None) -> etree._Element:
    """The paragraph `xml` as saved and read back, translated by `translate` if given."""
    d = docx.Document()
    d.element.body.insert(0, parse_xml(f"<w:p {NS}>{xml}</w:p>"))
    out = io.BytesIO()
    d.save(out)
    data = translate_docx(out.getvalue(), translate, "de") if translate else out.getvalue()
    return docx.Document(io.BytesIO(data)).element.body[0]


def _shape(p) -> list:
    """The paragraph's children: a run's text, a wrapper's tag and its runs' texts."""
    out = []
    for c in p:
        name = c.tag.split("}")[1]
        texts = ["".join(t.text for t in r.iter(qn("w:t"), qn("w:delText")))
                 for r in c.iter(qn("w:r"))]  # fmt: skip
        out.append(texts[0] if name == "r" else (name, *texts))
    return out


def _texts_and_formatting(p) -> list:
    return [etree.tostring(el) if el.tag == qn("w:rPr") else el.text
            for el in p.iter(qn("w:t"), qn("w:rPr"), qn("w:delText"))]  # fmt: skip


def _r(text: str) -> str:
    return f'<w:r><w:t xml:space="preserve">{text}</w:t></w:r>'


INSERTED = '<w:ins w:id="7" w:author="a">' + _r("großer ") + "</w:ins>"
DELETED = '<w:del w:id="8" w:author="a"><w:r><w:delText>kleiner </w:delText></w:r></w:del>'
SMART = (
    '<w:smartTag w:uri="urn:x" w:element="City"><w:smartTagPr/>' + _r("Berlin") + "</w:smartTag>"
)
CONTROL = '<w:sdt><w:sdtPr><w:id w:val="5"/></w:sdtPr><w:sdtContent>' + _r("Berlin") + (
    "</w:sdtContent></w:sdt>")  # fmt: skip


@pytest.mark.parametrize(
    ("xml", "capitals", "reversed_"),
    [
        (_r("Ein ") + INSERTED + DELETED + _r("Mann spielt."),
         ["EIN ", ("ins", "GROSSER "), ("del", "kleiner "), "MANN SPIELT."],
         ["spielt. Mann ", ("ins", "großer "), ("del", "kleiner "), "Ein"]),
        (_r("Ein Mann in ") + SMART + _r(" spielt."),
         ["EIN MANN IN ", ("smartTag", "BERLIN"), " SPIELT."],
         ["spielt. ", ("smartTag", "Berlin"), " in Mann Ein"]),
        (_r("Ein Mann in ") + CONTROL + _r(" spielt."),
         ["EIN MANN IN ", ("sdt", "BERLIN"), " SPIELT."],
         ["spielt. ", ("sdt", "Berlin"), " in Mann Ein"]),
    ],
)  # fmt: skip
def test_runs_in_an_insertion_a_smart_tag_a_content_control_go_with_their_sentence(
    xml, capitals, reversed_
):
    assert _shape(_one(xml, upper)) == capitals
    assert _shape(_one(xml, reverse)) == reversed_
    src = _one(xml)
    out = _one(xml, same)
    assert _texts_and_formatting(out) == _texts_and_formatting(src)
    assert _shape(out) == _shape(src)


def test_a_wrapper_the_translation_parts_gives_each_copy_an_id_of_its_own():
    def apart(sentences):  # "Ein großer Mann" -> "Ein Mann großer": "Ein" and "großer" apart
        return [(" ".join([*s.split()[::2], *s.split()[1::2]]), [(0, 0), (1, 2), (2, 1)])
                for s in sentences]  # fmt: skip

    xml = '<w:ins w:id="7" w:author="a">' + _r("Ein großer") + "</w:ins>" + _r(" Mann")
    p = _one(xml, apart)
    assert _shape(p) == [("ins", "Ein"), " Mann ", ("ins", "großer")]
    assert [el.get(qn("w:id")) for el in p.iter(qn("w:ins"))] == ["7", "8"]


def test_a_link_holding_a_field_has_its_other_text_translated():
    field = "".join(f'<w:r><w:fldChar w:fldCharType="{k}"/></w:r>' for k in ("begin", "separate"))
    link = (f"<w:hyperlink w:anchor='x'>{field}{_r('7')}<w:r><w:fldChar w:fldCharType='end'/>"
            f"</w:r>{_r(' Seite')}</w:hyperlink>")  # fmt: skip
    assert _shape(_one(_r("Ein ") + link + _r(" hier."), upper)) == [
        "EIN ", ("hyperlink", "", "", "7", "", " SEITE"), " HIER."]  # fmt: skip


def test_tabs_and_line_breaks_stay_where_the_translation_has_no_words():
    p = _one("<w:r><w:t>Ein Mann</w:t><w:tab/><w:t>spielt.</w:t><w:br/></w:r>",
             lambda sentences: [("", []) for _ in sentences])  # fmt: skip
    assert [c.tag.split("}")[1] for r in p.iter(qn("w:r")) for c in r] == ["tab", "br"]
