"""Word files: runs in wrappers inside wrappers (a tracked insertion in a smart tag, a
content control or a link in an insertion) read with their sentence and written back in
copies of each wrapper; a space at an insertion's edge kept inside it; deleted text kept
beside the words it followed or the insertion it replaces; an insertion of a space alone
kept, the spaces around it on their sides, one of a tab alone written once; a mark at an
insertion's end kept in it, and one at a link's edge in an insertion kept in the link;
Word's last page break hint kept."""

import io

import docx
import pytest
from docx.oxml import parse_xml
from docx.oxml.ns import nsdecls, qn
from fake_translate import recording, reverse, same, upper

from translator.documents.docx import translate_docx


def _one(xml: str, translate) -> object:
    """The paragraph `xml` translated by `translate`, as saved and read back."""
    d = docx.Document()
    d.element.body.insert(0, parse_xml(f"<w:p {nsdecls('w')}>{xml}</w:p>"))
    out = io.BytesIO()
    d.save(out)
    return docx.Document(io.BytesIO(translate_docx(out.getvalue(), translate, "de"))).element.body[
        0
    ]


def _tree(el) -> list:
    """What `el` holds: a run's text, a wrapper's tag and its tree (a control's content's)."""
    out = []
    for c in el.find(qn("w:sdtContent")) if el.tag == qn("w:sdt") else el:
        name = c.tag.split("}")[1]
        if name == "r":
            out.append("".join(t.text for t in c.iter(qn("w:t"), qn("w:delText"))))
        elif not name.endswith("Pr"):
            out.append((name, *_tree(c)))
    return out


def _r(text: str) -> str:
    return f'<w:r><w:t xml:space="preserve">{text}</w:t></w:r>'


def _ins(inner: str) -> str:
    return f'<w:ins w:id="7" w:author="a">{inner}</w:ins>'


DEL = '<w:del w:id="8" w:author="a"><w:r><w:delText xml:space="preserve">kleiner </w:delText></w:r></w:del>'  # fmt: skip
TAG = '<w:smartTag w:uri="urn:x" w:element="C">{}</w:smartTag>'
SDT = '<w:sdt><w:sdtPr><w:id w:val="5"/></w:sdtPr><w:sdtContent>{}</w:sdtContent></w:sdt>'
LINK = '<w:hyperlink w:anchor="x">{}</w:hyperlink>'


def apart(sentences):
    """Even words first, then odd ones: "Ein großer Mann" -> "Ein Mann großer"."""
    out = []
    for s in sentences:
        order = [*range(0, len(s.split()), 2), *range(1, len(s.split()), 2)]
        out.append((" ".join(s.split()[i] for i in order), [(i, j) for j, i in enumerate(order)]))
    return out


@pytest.mark.parametrize(
    ("xml", "capitals"),
    [
        (TAG.format(_ins(_r("Ein großer")) + _r(" Mann")) + _r(" spielt."),
         [("smartTag", ("ins", "EIN GROSSER"), " MANN"), " SPIELT."]),
        (_ins(SDT.format(_r("Ein großer"))) + _r(" Mann spielt."),
         [("ins", ("sdt", "EIN GROSSER")), " MANN SPIELT."]),
        (_ins(LINK.format(_r("Ein großer"))) + _r(" Mann spielt."),
         [("ins", ("hyperlink", "EIN GROSSER")), " MANN SPIELT."]),
    ],
)  # fmt: skip
def test_runs_in_a_wrapper_inside_a_wrapper_go_with_their_sentence(xml, capitals):
    translate, seen = recording(upper)
    assert _tree(_one(xml, translate)) == capitals
    assert seen == ["Ein großer Mann spielt."]
    # parted by the translation: each part in copies of all its wrappers, ids unique
    p = _one(xml, apart)
    ids = [el.get(qn("w:id")) for el in p.iter(qn("w:ins"))]
    ids += [el.get(qn("w:val")) for el in p.iter(qn("w:id"))]
    assert len(ids) >= 2 and len(set(ids)) == len(ids)
    assert "".join(t.text for t in p.iter(qn("w:t"))) == "Ein Mann großer spielt."


@pytest.mark.parametrize(
    ("xml", "capitals", "reversed_"),
    [
        (_r("Ein") + _ins(_r(" großer")) + _r(" Mann spielt."),
         ["EIN", ("ins", " GROSSER"), " MANN SPIELT."],
         ["spielt. Mann", ("ins", " großer"), " Ein"]),
        (_r("Ein ") + _ins(_r("großer ")) + _r("Mann spielt."),
         ["EIN ", ("ins", "GROSSER "), "MANN SPIELT."],
         ["spielt. Mann ", ("ins", "großer "), "Ein"]),
    ],
)  # fmt: skip
def test_a_space_at_an_insertions_edge_stays_inside_it(xml, capitals, reversed_):
    assert _tree(_one(xml, upper)) == capitals
    assert _tree(_one(xml, reverse)) == reversed_


@pytest.mark.parametrize(
    ("xml", "reversed_"),
    [
        (_r("Der Hund ") + DEL + _r("Mann spielt heute gut."),
         ["gut. heute spielt Mann Hund ", ("del", "kleiner "), "Der"]),
        (_r("Der Hund ") + DEL + _ins(_r("großer ")) + _r("Mann spielt."),
         ["spielt. Mann ", ("del", "kleiner "), ("ins", "großer "), "Hund Der"]),
        (_r("Mann spielt ") + DEL + _ins(_r("gut.")),
         [("del", "kleiner "), ("ins", "gut."), " spielt Mann"]),
        (_r("Ein Satz. ") + DEL + _r("Der Hund spielt."),
         ["Satz. Ein spielt. Hund ", ("del", "kleiner "), "Der"]),
    ],
)  # fmt: skip
def test_deleted_text_stays_after_the_word_it_followed_or_before_what_replaces_it(xml, reversed_):
    assert _tree(_one(xml, reverse)) == reversed_


def test_the_last_rendered_page_break_is_kept_in_the_first_translated_run():
    xml = '<w:r><w:t xml:space="preserve">Ein Mann </w:t><w:lastRenderedPageBreak/><w:t>spielt.</w:t></w:r>'  # fmt: skip
    for translate in (upper, same):
        p = _one(xml, translate)
        assert [c.tag.split("}")[1] for c in p.iter(qn("w:r")) for c in c] == [
            "lastRenderedPageBreak", "t"]  # fmt: skip


@pytest.mark.parametrize(
    ("xml", "translate", "tree"),
    [
        (_r("groß") + _ins(_r(" ")) + _r("Fuß"), upper, ["GROSS", ("ins", " "), "FUSS"]),
        (_r("Ein") + _ins(_r(" ")) + _r("Mann spielt."), reverse,
         ["spielt.", ("ins", " "), "Mann Ein"]),
        (_r("Ein Mann") + _ins(_r(" ")), upper, ["EIN MANN", ("ins", " ")]),
    ],
)  # fmt: skip
def test_an_insertion_of_a_space_alone_is_kept_with_its_space(xml, translate, tree):
    # moved whole where a space of the translation falls, which it stands for
    assert _tree(_one(xml, translate)) == tree
    assert _tree(_one(xml, same)) == _tree(parse_xml(f"<w:p {nsdecls('w')}>{xml}</w:p>"))


def test_a_mark_at_an_insertions_end_stays_inside_it():
    end = '<w:bookmarkEnd w:id="3"/>'
    xml = _ins(_r("großer") + LINK.format(_r(" Mann")) + end) + _r(" spielt.")
    for translate in (same, upper):
        (ins,) = _one(xml, translate).iter(qn("w:ins"))
        assert [c.tag.split("}")[1] for c in ins] == ["r", "hyperlink", "bookmarkEnd"]


TAB = "<w:r><w:tab/></w:r>"


@pytest.mark.parametrize(
    ("xml", "translate", "tree"),
    [
        (_r("Ein ") + _ins(_r(" ")) + _r(" Mann spielt."), same,
         ["Ein ", ("ins", " "), " Mann spielt."]),
        (_r("Ein Satz. ") + _ins(_r(" ")) + _r(" Der Hund spielt."), reverse,
         ["Satz. Ein ", ("ins", " "), " spielt. Hund Der"]),
        (_r("Ein ") + _ins(TAB) + _r(" Mann spielt."), upper,
         ["EIN ", ("ins", ""), " MANN SPIELT."]),
    ],
)  # fmt: skip
def test_the_spaces_around_an_insertion_of_a_space_stay_on_their_sides(xml, translate, tree):
    assert _tree(_one(xml, translate)) == tree


@pytest.mark.parametrize(
    ("xml", "reversed_"),
    [
        (_r("Ein") + _ins(TAB) + _r("Mann spielt."), ["spielt.", ("ins", ""), "Mann Ein"]),
        (_r("Ein ") + _ins(TAB) + _r(" Mann spielt."), ["spielt.", ("ins", ""), "Mann Ein"]),
    ],
)  # fmt: skip
def test_an_insertion_of_a_tab_alone_is_written_once(xml, reversed_):
    assert _tree(_one(xml, reverse)) == reversed_
    for translate in (same, upper, reverse):
        tabs = list(_one(xml, translate).iter(qn("w:tab")))
        assert len(tabs) == 1 and tabs[0].getparent().getparent().tag == qn("w:ins")


START = '<w:bookmarkStart w:id="3" w:name="b"/>'
END = '<w:bookmarkEnd w:id="3"/>'


@pytest.mark.parametrize(
    ("xml", "capitals", "reversed_"),
    [
        (_ins(_r("großer") + LINK.format(_r(" Mann") + END)) + _r(" spielt."),
         [("ins", "GROSSER", ("hyperlink", " MANN", ("bookmarkEnd",))), " SPIELT."], None),
        (_ins(LINK.format(_r("großer Mann") + END)) + _r(" spielt."),
         [("ins", ("hyperlink", "GROSSER MANN", ("bookmarkEnd",))), " SPIELT."],
         ["spielt. ", ("ins", ("hyperlink", "Mann großer", ("bookmarkEnd",)))]),
        (_ins(_r("Ein ") + LINK.format(START + _r("großer Mann"))) + _r(" spielt."),
         [("ins", "EIN ", ("hyperlink", ("bookmarkStart",), "GROSSER MANN")), " SPIELT."],
         ["spielt. ", ("ins", ("hyperlink", ("bookmarkStart",), "Mann großer"), " Ein")]),
    ],
)  # fmt: skip
def test_a_mark_at_a_links_edge_in_an_insertion_stays_in_the_link(xml, capitals, reversed_):
    assert _tree(_one(xml, upper)) == capitals
    assert _tree(_one(xml, same)) == _tree(parse_xml(f"<w:p {nsdecls('w')}>{xml}</w:p>"))
    if reversed_:
        assert _tree(_one(xml, reverse)) == reversed_
