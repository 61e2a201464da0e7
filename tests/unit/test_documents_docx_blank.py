"""Word files: a wrapper of runs holding no word (an insertion of a space, an empty link),
moved whole, goes in no copy of a wrapper but its own (no link in a link, no insertion in
an insertion) and stays in the one it was in; the space it holds is written once, however
a tab, a line break or a bookmark stands beside it; the spaces beside it keep their
formatting."""

import io

import docx
import pytest
from docx.oxml import parse_xml
from docx.oxml.ns import nsdecls, qn
from fake_translate import reverse, same, upper

from translator.documents.docx import translate_docx


def _one(xml: str, translate) -> object:
    """The paragraph `xml` translated by `translate`, as saved and read back."""
    d = docx.Document()
    d.element.body.insert(0, parse_xml(f"<w:p {nsdecls('w')}>{xml}</w:p>"))
    out = io.BytesIO()
    d.save(out)
    data = translate_docx(out.getvalue(), translate, "de")
    return docx.Document(io.BytesIO(data)).element.body[0]


def _tree(el) -> list:
    """What `el` holds: a run's text (a tab, a line break as one), a wrapper's tag and its
    tree, a mark's tag."""
    out = []
    for c in el:
        name = c.tag.split("}")[1]
        if name == "r":
            chars = {qn("w:tab"): "\t", qn("w:br"): "\n"}
            out.append("".join(x.text if x.tag == qn("w:t") else chars.get(x.tag, "") for x in c))
        elif not name.endswith("Pr"):
            out.append((name, *_tree(c)))
    return out


def _r(text: str, props: str = "") -> str:
    return f'<w:r><w:rPr>{props}</w:rPr><w:t xml:space="preserve">{text}</w:t></w:r>'


def _ins(inner: str, n: int = 7) -> str:
    return f'<w:ins w:id="{n}" w:author="a">{inner}</w:ins>'


def _link(inner: str, to: str = "x") -> str:
    return f'<w:hyperlink w:anchor="{to}">{inner}</w:hyperlink>'


EMPTY = "<w:r><w:rPr><w:b/></w:rPr></w:r>"  # a run without text (Word leaves some)
LINE, TAB = "<w:r><w:br/></w:r>", "<w:r><w:tab/></w:r>"
START = '<w:bookmarkStart w:id="3" w:name="b"/>'


@pytest.mark.parametrize(
    "xml",
    [
        _ins(EMPTY) + _ins(_r(" Mann,"), 8) + LINE + _r("spielt."),
        _link(EMPTY) + _link(_r(" Mann,"), "y") + LINE + _r("spielt."),
    ],
)
def test_a_wrapper_without_words_goes_in_no_copy_of_another(xml):
    for translate in (same, upper, reverse):
        p = _one(xml, translate)
        for tag in ("w:ins", "w:hyperlink"):
            assert not [a for x in p.iter(qn(tag)) for a in x.iterancestors(qn(tag))]
        text = "".join(t.text for t in p.iter(qn("w:t")))
        assert sorted(text.replace(" ", "")) == sorted(translate(["Mann,spielt."])[0][0])


@pytest.mark.parametrize(
    ("xml", "capitals"),
    [
        (_link(_r("Ein") + _ins(_r(" "))) + _r("Mann spielt."),
         [("hyperlink", "EIN", ("ins", " ")), "MANN SPIELT."]),
        (_r("Ein") + _link(_ins(_r(" ")) + _r("Mann")) + _r(" spielt."),
         ["EIN", ("hyperlink", ("ins", " "), "MANN"), " SPIELT."]),
    ],
)  # fmt: skip
def test_a_wrapper_without_words_stays_in_the_wrapper_it_was_in(xml, capitals):
    assert _tree(_one(xml, upper)) == capitals


@pytest.mark.parametrize(
    ("xml", "capitals"),
    [
        (_link(TAB) + _r("\tMann spielt."), ["\t", ("hyperlink", "\t"), "MANN SPIELT."]),
        (_ins(_r(" ")) + LINE + _r("Mann spielt."), ["\n", ("ins", " "), "MANN SPIELT."]),
        (_r("Ein") + START + _ins(_r(" ")) + _r("Mann spielt."),
         ["EIN", ("bookmarkStart",), ("ins", " "), "MANN SPIELT."]),
    ],
)  # fmt: skip
def test_the_space_a_wrapper_without_words_holds_is_written_once(xml, capitals):
    assert _tree(_one(xml, upper)) == capitals
    spaces = "".join(t.text for t in parse_xml(f"<w:p {nsdecls('w')}>{xml}</w:p>").iter(qn("w:t")))
    text = "".join(t.text for t in _one(xml, reverse).iter(qn("w:t")))
    assert text.count(" ") == spaces.count(" ")


def test_a_space_beside_an_empty_wrapper_keeps_its_formatting():
    xml = _ins(EMPTY) + _r(" ") + _r("Mann", "<w:i/>") + _r(" spielt.")
    runs = [(r.text, r.italic) for r in docx.text.paragraph.Paragraph(_one(xml, upper), None).runs]
    assert [(t, i) for t, i in runs if t] == [(" ", None), ("MANN", True), (" SPIELT.", None)]
