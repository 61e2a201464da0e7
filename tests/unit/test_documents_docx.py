"""Word files: runs' formatting, hyperlinks, tables, headers and footers carried; the rest
of the file kept; a file that is no docx refused with its name."""

import io
import zipfile

import docx
import pytest
from docx.opc.constants import RELATIONSHIP_TYPE
from docx.oxml import OxmlElement
from docx.oxml.ns import qn
from docx.shared import Pt
from fake_translate import reverse, same, upper

from translator.documents.docx import translate_docx
from translator.errors import UserError


def make() -> bytes:
    d = docx.Document()
    d.add_paragraph("A man rides a bike.", style="Heading 1")
    p = d.add_paragraph("Two dogs ")
    p.add_run("play hard").bold = True
    p.add_run(" in the snow. A woman ")
    r = p.add_run("reads")
    r.italic, r.font.size = True, Pt(15)
    p.add_run(" a book.")
    rel = d.part.relate_to("http://example.com", RELATIONSHIP_TYPE.HYPERLINK, is_external=True)
    link = OxmlElement("w:hyperlink")
    link.set(qn("r:id"), rel)
    run = OxmlElement("w:r")
    run.text = "the link text"
    link.append(run)
    p = d.add_paragraph("See ")
    p._p.append(link)
    p.add_run(" now.")
    table = d.add_table(rows=1, cols=2)
    table.cell(0, 0).text = "cell one"
    table.cell(0, 1).add_table(rows=1, cols=1).cell(0, 0).text = "nested cell"
    d.sections[0].header.paragraphs[0].text = "header text"
    d.sections[0].footer.paragraphs[0].text = "footer text"
    p = d.add_paragraph("line one")
    p.add_run().add_break()
    p.add_run("line two")
    out = io.BytesIO()
    d.save(out)
    return out.getvalue()


def runs(paragraph):
    return [(r.text, r.bold, r.italic) for r in paragraph.runs]


def test_text_translated_with_runs_links_tables_headers_footers():
    d = docx.Document(io.BytesIO(translate_docx(make(), upper, "en")))
    heading, body, linked, lines = d.paragraphs
    assert heading.text == "A MAN RIDES A BIKE." and heading.style.name == "Heading 1"
    assert runs(body) == [
        ("TWO DOGS ", None, None),
        ("PLAY HARD", True, None),
        (" IN THE SNOW. A WOMAN ", None, None),
        ("READS", None, True),
        (" A BOOK.", None, None),
    ]
    assert body.runs[3].font.size == Pt(15)
    assert linked.text == "SEE THE LINK TEXT NOW."
    assert [(h.url, h.text) for h in linked.hyperlinks] == [("http://example.com", "THE LINK TEXT")]
    assert lines.text == "LINE ONE\nLINE TWO"
    table = d.tables[0]
    assert table.cell(0, 0).text == "CELL ONE"
    assert table.cell(0, 1).tables[0].cell(0, 0).text == "NESTED CELL"
    assert d.sections[0].header.paragraphs[0].text == "HEADER TEXT"
    assert d.sections[0].footer.paragraphs[0].text == "FOOTER TEXT"


def test_formatting_follows_the_aligned_words():
    d = docx.Document(io.BytesIO(translate_docx(make(), reverse, "en")))
    body = d.paragraphs[1]
    assert body.text == "snow. the in hard play dogs Two book. a reads woman A"
    assert [t for t, bold, _ in runs(body) if bold] == ["hard play"]
    assert [t for t, _, italic in runs(body) if italic] == ["reads"]
    assert d.paragraphs[2].hyperlinks[0].text == "text link the"


def test_parts_not_translated_are_kept():
    source = make()
    out = translate_docx(source, upper, "en")
    with zipfile.ZipFile(io.BytesIO(source)) as a, zipfile.ZipFile(io.BytesIO(out)) as b:
        assert sorted(a.namelist()) == sorted(b.namelist())
        assert a.read("word/styles.xml") == b.read("word/styles.xml")


def test_one_call_for_the_whole_document():
    calls = []

    def model(sentences):
        calls.append(sentences)
        return upper(sentences)

    translate_docx(make(), model, "en")
    assert len(calls) == 1 and "header text" in calls[0] and "nested cell" in calls[0]


def test_not_a_docx_is_refused_with_its_name():
    with pytest.raises(UserError, match=r"^in\.docx: not a docx file \(a docx is a zip"):
        translate_docx(b"plain text", upper, "en", name="in.docx")
    other = io.BytesIO()
    with zipfile.ZipFile(other, "w") as z:
        z.writestr("a.txt", "x")
    with pytest.raises(UserError, match=r"^in\.docx: not a docx file \(a zip without the \["):
        translate_docx(other.getvalue(), upper, "en", name="in.docx")
    sheet = io.BytesIO()  # a zip of an Office file of another kind
    with zipfile.ZipFile(sheet, "w") as z:
        z.writestr(
            "[Content_Types].xml",
            """<?xml version="1.0"?><Types xmlns=\
"http://schemas.openxmlformats.org/package/2006/content-types"><Override \
PartName="/xl/workbook.xml" ContentType="application/vnd.openxmlformats-\
officedocument.spreadsheetml.sheet.main+xml"/></Types>""",
        )
        z.writestr(
            "_rels/.rels",
            """<?xml version="1.0"?><Relationships xmlns=\
"http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="r1" \
Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" \
Target="xl/workbook.xml"/></Relationships>""",
        )
        z.writestr("xl/workbook.xml", "<workbook/>")
    with pytest.raises(UserError, match=r"another kind: application/vnd\S+sheet\.main\+xml\)$"):
        translate_docx(sheet.getvalue(), upper, "en", name="in.docx")


def test_an_image_inside_a_paragraph_stays_between_its_translated_sides(tmp_path):
    from PIL import Image

    Image.new("RGB", (4, 4), "red").save(tmp_path / "dot.png")
    d = docx.Document()
    p = d.add_paragraph("Before the picture. ")
    p.add_run().add_picture(str(tmp_path / "dot.png"))
    p.add_run(" After it.")
    d.add_paragraph("   ")
    data = io.BytesIO()
    d.save(data)
    out = docx.Document(io.BytesIO(translate_docx(data.getvalue(), upper, "en")))
    texts = [(r.text, bool(r._r.xpath(".//pic:pic"))) for r in out.paragraphs[0].runs]
    assert texts == [("BEFORE THE PICTURE. ", False), ("", True), (" AFTER IT.", False)]
    assert out.paragraphs[1].text == "   "
    assert len(out.inline_shapes) == 1


def test_punctuation_glued_to_a_formatted_word_keeps_its_formatting():
    d = docx.Document()
    p = d.add_paragraph("Klick ")
    p.add_run("hier").bold = True
    p.add_run(". Und (")
    p.add_run("Hund").italic = True
    p.add_run(").")
    data = io.BytesIO()
    d.save(data)
    out = docx.Document(io.BytesIO(translate_docx(data.getvalue(), upper, "de")))
    assert runs(out.paragraphs[0]) == [
        ("KLICK ", None, None), ("HIER", True, None), (". UND (", None, None),
        ("HUND", None, True), (").", None, None),
    ]  # fmt: skip
    out = docx.Document(io.BytesIO(translate_docx(data.getvalue(), reverse, "de")))
    assert runs(out.paragraphs[0]) == [
        ("hier", True, None), (". Klick (", None, None), ("Hund", None, True),
        ("). Und", None, None),
    ]  # fmt: skip


def saved(d) -> bytes:
    data = io.BytesIO()
    d.save(data)
    return data.getvalue()


def styled(d, text: str, style: str):
    run = d.paragraphs[-1].add_run(text)
    run.style = d.styles[style]
    return run


def test_a_word_copied_keeps_each_characters_formatting_and_spaces_stay_where_they_were():
    d = docx.Document()
    d.add_paragraph("Add ").add_run("--skip").bold = True
    d.paragraphs[-1].add_run(" to ")
    d.paragraphs[-1].add_run("step(a, b)").bold = True
    d.paragraphs[-1].add_run(", and ")
    d.paragraphs[-1].add_run("it").italic = True
    d.paragraphs[-1].add_run("'s done\xa0now\tthen")
    source = [(r.text, r.bold, r.italic) for r in d.paragraphs[-1].runs]
    for model in (same, upper):
        out = docx.Document(io.BytesIO(translate_docx(saved(d), model, "en")))
        assert runs(out.paragraphs[0]) == [(model([t])[0][0] if t.strip() else t, b, i)
                                           for t, b, i in source]  # fmt: skip


def test_code_paragraphs_are_not_translated_and_inline_code_is_copied():
    from docx.enum.style import WD_STYLE_TYPE

    d = docx.Document()
    d.styles.add_style("HTML Code", WD_STYLE_TYPE.CHARACTER)
    block = d.styles.add_style("My Listing", WD_STYLE_TYPE.PARAGRAPH)
    block.base_style = d.styles["macro"]
    d.add_paragraph("npm install the package", style="My Listing")
    d.add_paragraph("Run ")
    styled(d, "npm ci", "HTML Code")
    d.paragraphs[-1].add_run(" in the ")
    styled(d, "dir", "HTML Code")
    d.paragraphs[-1].add_run("s.")
    out = docx.Document(io.BytesIO(translate_docx(saved(d), upper, "en")))
    assert out.paragraphs[0].text == "npm install the package"
    assert [(r.text, r.style.name) for r in out.paragraphs[1].runs] == [
        ("RUN ", "Default Paragraph Font"), ("npm ci", "HTML Code"),
        (" IN THE ", "Default Paragraph Font"), ("dir", "HTML Code"),
        ("S.", "Default Paragraph Font"),
    ]  # fmt: skip
    out = docx.Document(io.BytesIO(translate_docx(saved(d), reverse, "en")))
    code = [r.text for r in out.paragraphs[1].runs if r.style.name == "HTML Code"]
    assert code == ["dir", "npm ci"] and out.paragraphs[1].text.count("npm ci") == 1


def test_an_empty_hyperlink_is_kept_and_does_not_cut_its_sentence():
    d = docx.Document()
    d.add_paragraph("Ein Hund ")._p.append(OxmlElement("w:hyperlink"))
    d.paragraphs[-1].add_run("läuft.")
    calls = []
    out = translate_docx(saved(d), lambda s: calls.extend(s) or upper(s), "de")
    p = docx.Document(io.BytesIO(out)).paragraphs[0]
    assert calls == ["Ein Hund läuft."] and p.text == "EIN HUND LÄUFT."
    assert len(p._p.findall(qn("w:hyperlink"))) == 1


def test_runs_differing_in_spelling_settings_alone_are_one_text():
    d = docx.Document()
    p = d.add_paragraph()
    for text, props in [("Two dogs ", ["lang"]), ("play", ["noProof"]), (" in the  deep ", []),
                        ("snow", ["noProof", "b"]), (".", [])]:  # fmt: skip
        run = p.add_run(text)
        for name in props:
            el = OxmlElement(f"w:{name}")
            if name == "lang":
                el.set(qn("w:val"), "en-GB")
            run._r.get_or_add_rPr().append(el)

    def mirrored(sentences):  # new words: none copied from the source
        return [(" ".join(w[::-1] for w in s.split()), [(i, i) for i in range(len(s.split()))])
                for s in sentences]  # fmt: skip

    out = docx.Document(io.BytesIO(translate_docx(saved(d), mirrored, "en"))).paragraphs[0]
    # no span for a run differing in spelling settings alone; the words written in the
    # run holding most spaces (no settings), the bold word in its own, but for the "." it
    # now starts with: the source's bold began at a letter
    assert runs(out) == [("owT sgod yalp ni eht peed .", None, None), ("wons", True, None)]
    assert out.runs[0]._r.rPr is None
    copied = docx.Document(io.BytesIO(translate_docx(saved(d), upper, "en"))).paragraphs[0]
    # copied words keep their runs' spelling settings
    assert [r._r.rPr.xml.count("noProof") if r._r.rPr is not None else 0
            for r in copied.runs] == [0, 1, 0, 1, 0]  # fmt: skip


def _children(paragraph) -> list[str]:
    """The paragraph's children: a run by its text, anything else by its tag."""
    return [("".join(t.text for t in c.iter(qn("w:t"))) if c.tag == qn("w:r")
             else c.tag.split("}")[1]) for c in paragraph._p if c.tag != qn("w:pPr")]  # fmt: skip


def test_bookmarks_and_comment_ranges_keep_marking_their_words():
    d = docx.Document()
    p = d.add_paragraph("Ein Mann ")
    for tag, text, bold in [("bookmarkStart", "fährt Rad", True), ("bookmarkEnd", " im Park.", None),
                            ("commentRangeStart", " Zwei Hunde", None),
                            ("commentRangeEnd", " spielen.", None)]:  # fmt: skip
        el = OxmlElement(f"w:{tag}")
        el.set(qn("w:id"), "0")
        p._p.append(el)
        p.add_run(text).bold = bold
    out = docx.Document(io.BytesIO(translate_docx(saved(d), upper, "de"))).paragraphs[0]
    assert _children(out) == ["EIN MANN ", "bookmarkStart", "FÄHRT RAD", "bookmarkEnd",
                              " IM PARK.", "commentRangeStart", " ZWEI HUNDE",
                              "commentRangeEnd", " SPIELEN."]  # fmt: skip
    out = docx.Document(io.BytesIO(translate_docx(saved(d), reverse, "de"))).paragraphs[0]
    kept = [c for c in _children(out) if c.endswith(("Start", "End"))]
    assert kept == ["bookmarkStart", "bookmarkEnd", "commentRangeStart", "commentRangeEnd"]


def test_a_range_in_one_sentence_marks_its_words_where_the_translation_moved_them():
    d = docx.Document()
    p = d.add_paragraph("Der ")
    for tag, text in [("bookmarkStart", "alte Mann"), ("bookmarkEnd", " fährt ein Rad.")]:
        el = OxmlElement(f"w:{tag}")
        el.set(qn("w:id"), "3")
        p._p.append(el)
        p.add_run(text)
    out = docx.Document(io.BytesIO(translate_docx(saved(d), reverse, "de"))).paragraphs[0]
    # "Rad. ein fährt Mann alte Der": the range still holds "alte Mann", reversed
    assert _children(out) == ["Rad. ein fährt ", "bookmarkStart", "Mann alte", "bookmarkEnd",
                              " Der"]  # fmt: skip


def test_a_part_with_a_dtd_is_refused():
    """An internal DTD's entities would be left undefined in the file written (the DTD is
    dropped on save, its references kept), so Word could not open it."""
    source, patched = io.BytesIO(make()), io.BytesIO()
    with zipfile.ZipFile(source) as a, zipfile.ZipFile(patched, "w") as b:
        for item in a.infolist():
            data = a.read(item)
            if item.filename == "word/document.xml":
                head, _, body = data.partition(b"?>")
                data = head + b'?><!DOCTYPE x [<!ENTITY c "cat">]>' + body
                data = data.replace(b"cell one", b"cell &c;")
            b.writestr(item, data)
    with pytest.raises(UserError, match=r"^in\.docx: /word/document\.xml declares a DTD"):
        translate_docx(patched.getvalue(), upper, "en", name="in.docx")


def _run(p, xml: str):
    """A run parsed from `xml` (its children, in the w namespace) appended to `p`."""
    from docx.oxml import parse_xml
    from docx.oxml.ns import nsdecls

    run = parse_xml(f"<w:r {nsdecls('w')}>{xml}</w:r>")
    p._p.append(run)
    return run


def _inner(paragraph) -> list[str]:
    """The paragraph's runs' children: a text by its text, anything else by its tag and
    attributes."""
    return [el.text if el.tag == qn("w:t") else el.tag.split("}")[1] + "".join(
            f" {k.split('}')[1]}={v}" for k, v in sorted(el.attrib.items()))
            for el in paragraph._p.iter() if el.getparent() is not None and el.getparent().tag
            == qn("w:r") and el.tag != qn("w:rPr")]  # fmt: skip


def test_page_and_column_breaks_stay_and_part_the_text_on_their_sides():
    from docx.enum.text import WD_BREAK
    from fake_translate import recording

    d = docx.Document()
    p = d.add_paragraph("Ein Mann spielt Gitarre.")
    p.add_run().add_break(WD_BREAK.PAGE)
    p = d.add_paragraph()
    p.add_run().add_break(WD_BREAK.PAGE)
    p.add_run("Zwei Hunde laufen.")
    p = d.add_paragraph()
    p.add_run("Eine Frau singt").add_break(WD_BREAK.COLUMN)
    p.add_run("Ein Kind lacht.")
    translate, seen = recording(upper)
    out = docx.Document(io.BytesIO(translate_docx(saved(d), translate, "de"))).paragraphs
    assert seen == ["Ein Mann spielt Gitarre.", "Zwei Hunde laufen.", "Eine Frau singt",
                    "Ein Kind lacht."]  # fmt: skip
    assert [_inner(p) for p in out] == [
        ["EIN MANN SPIELT GITARRE.", "br type=page"], ["br type=page", "ZWEI HUNDE LAUFEN."],
        ["EINE FRAU SINGT", "br type=column", "EIN KIND LACHT."],
    ]  # fmt: skip


def test_line_breaks_tabs_and_hyphens_keep_their_elements():
    d = docx.Document()
    p = d.add_paragraph()
    _run(p, '<w:t>Ein Mann</w:t><w:br w:clear="all"/><w:t>spielt</w:t><w:cr/><w:t>'
            'Gitarre</w:t><w:ptab w:relativeTo="margin" w:alignment="right" w:leader="none"/>'
            '<w:t>im E</w:t><w:noBreakHyphen/><w:t>Park und Ge</w:t><w:softHyphen/>'
            '<w:t>sang.</w:t>')  # fmt: skip
    out = docx.Document(io.BytesIO(translate_docx(saved(d), upper, "de"))).paragraphs[0]
    assert _inner(out) == [
        "EIN MANN", "br clear=all", "SPIELT", "cr", "GITARRE",
        "ptab alignment=right leader=none relativeTo=margin", "IM E", "noBreakHyphen",
        "PARK UND GE", "softHyphen", "SANG.",
    ]  # fmt: skip


def test_a_run_with_a_positional_tab_is_translated_and_keeps_it():
    d = docx.Document()
    _run(d.add_paragraph(), '<w:t>Ein Mann</w:t><w:ptab w:relativeTo="margin" '
         'w:alignment="right" w:leader="none"/><w:t>spielt.</w:t>')  # fmt: skip
    out = docx.Document(io.BytesIO(translate_docx(saved(d), upper, "de"))).paragraphs[0]
    assert _inner(out) == ["EIN MANN", "ptab alignment=right leader=none relativeTo=margin",
                           "SPIELT."]  # fmt: skip


def test_a_link_holding_spelling_marks_and_a_bookmark_is_translated_with_its_sentence():
    from docx.oxml import parse_xml
    from docx.oxml.ns import nsdecls
    from fake_translate import recording

    d = docx.Document()
    rid = d.part.relate_to("https://example.com/", RELATIONSHIP_TYPE.HYPERLINK, is_external=True)
    body = d.element.body
    body.insert(0, parse_xml(
        f'<w:p {nsdecls("w", "r")}><w:r><w:t xml:space="preserve">Ein </w:t></w:r>'
        f'<w:hyperlink r:id="{rid}"><w:proofErr w:type="spellStart"/><w:r><w:t>Mann</w:t>'
        '</w:r><w:proofErr w:type="spellEnd"/><w:bookmarkStart w:id="1" w:name="b"/><w:r>'
        '<w:t xml:space="preserve"> spielt</w:t></w:r><w:bookmarkEnd w:id="1"/></w:hyperlink>'
        '<w:r><w:t xml:space="preserve"> Gitarre.</w:t></w:r></w:p>'))  # fmt: skip
    translate, seen = recording(upper)
    out = docx.Document(io.BytesIO(translate_docx(saved(d), translate, "de"))).paragraphs[0]
    assert seen == ["Ein Mann spielt Gitarre."] and out.text == "EIN MANN SPIELT GITARRE."
    (link,) = out._p.findall(qn("w:hyperlink"))
    assert link.get(qn("r:id")) == rid
    # each mark where it stood among the words: inside the link between two of its words,
    # else beside it
    assert _children(out) == ["EIN ", "proofErr", "hyperlink", "bookmarkEnd", " GITARRE."]
    assert [c.tag.split("}")[1] for c in link] == ["r", "proofErr", "bookmarkStart", "r"]


def _field_char(p, kind: str) -> None:
    _run(p, f'<w:fldChar w:fldCharType="{kind}"/>')


def test_a_field_over_paragraphs_is_left_as_it_is_and_the_text_after_it_translated():
    d = docx.Document()
    p = d.add_paragraph()
    _field_char(p, "begin")
    _run(p, '<w:instrText xml:space="preserve"> TOC \\o "1-3" </w:instrText>')
    _field_char(p, "separate")
    p.add_run("Ein Mann spielt")
    d.add_paragraph("Zwei Hunde laufen")
    p = d.add_paragraph("Eine Frau singt")
    _field_char(p, "end")
    p.add_run(" Ein Kind lacht im Park.")
    d.add_paragraph("Ein Hund schläft.")
    out = docx.Document(io.BytesIO(translate_docx(saved(d), upper, "de"))).paragraphs
    assert [p.text for p in out] == ["Ein Mann spielt", "Zwei Hunde laufen",
                                     "Eine Frau singt EIN KIND LACHT IM PARK.",
                                     "EIN HUND SCHLÄFT."]  # fmt: skip


def test_a_field_begun_inside_a_tracked_change_is_left_as_it_is():
    from docx.oxml import parse_xml
    from docx.oxml.ns import nsdecls

    d = docx.Document()
    p = d.add_paragraph()
    p._p.append(parse_xml(
        f'<w:ins {nsdecls("w")} w:id="20" w:author="a"><w:r><w:fldChar w:fldCharType="begin"/>'
        '</w:r><w:r><w:instrText> REF x </w:instrText></w:r></w:ins>'))  # fmt: skip
    _field_char(p, "separate")
    p.add_run("Ergebnis Text")
    _field_char(p, "end")
    p.add_run(" Ein Hund.")
    out = docx.Document(io.BytesIO(translate_docx(saved(d), upper, "de"))).paragraphs[0]
    assert [t for t in _inner(out) if not t.startswith(("fldChar", "instrText"))] == [
        "Ergebnis Text", " EIN HUND."]  # fmt: skip


def test_a_field_that_never_ends_ends_with_its_paragraph():
    d = docx.Document()
    p = d.add_paragraph("Ein Mann. ")
    _field_char(p, "begin")
    _run(p, '<w:instrText xml:space="preserve"> PAGE </w:instrText>')
    _field_char(p, "separate")
    p.add_run("Ergebnis")
    d.add_paragraph("Ein Hund läuft schnell.")
    out = docx.Document(io.BytesIO(translate_docx(saved(d), upper, "de"))).paragraphs
    assert [p.text for p in out] == ["EIN MANN. Ergebnis", "EIN HUND LÄUFT SCHNELL."]


def test_tabs_and_line_breaks_stay_where_the_translation_moves_the_words():
    from fake_translate import bracketed

    d = docx.Document()
    _run(d.add_paragraph(), "<w:t>Ein</w:t><w:tab/><w:t>Mann spielt.</w:t>")
    _run(d.add_paragraph(), '<w:t>Ein Mann</w:t><w:br w:clear="all"/><w:t>spielt hier</w:t>'
         "<w:cr/><w:t>draußen.</w:t>")  # fmt: skip
    out = docx.Document(io.BytesIO(translate_docx(saved(d), reverse, "de"))).paragraphs
    # each after the target word aligned last to the words before it; two meet at the
    # last place there is between two words rather than one being lost
    assert _inner(out[0]) == ["spielt. Mann", "tab", "Ein"]
    assert _inner(out[1]) == ["draußen. hier spielt Mann", "br clear=all", "cr", "Ein"]
    out = docx.Document(io.BytesIO(translate_docx(saved(d), bracketed, "de"))).paragraphs
    assert _inner(out[0]) == ["(Ein).", "tab", "(Mann). (spielt)."]
    assert _inner(out[1]) == ["(Ein). (Mann).", "br clear=all", "(spielt). (hier).", "cr",
                              "(draußen)."]  # fmt: skip


def test_a_positional_tab_parts_the_text_on_its_sides():
    from fake_translate import recording

    d = docx.Document()
    _run(d.add_paragraph(), '<w:t>Kapitel Eins</w:t><w:ptab w:relativeTo="margin" '
         'w:alignment="right" w:leader="none"/><w:t>Seite drei</w:t>')  # fmt: skip
    translate, seen = recording(reverse)
    out = docx.Document(io.BytesIO(translate_docx(saved(d), translate, "de"))).paragraphs[0]
    assert seen == ["Kapitel Eins", "Seite drei"]
    assert _inner(out) == ["Eins Kapitel", "ptab alignment=right leader=none relativeTo=margin",
                           "drei Seite"]  # fmt: skip


def test_a_soft_hyphen_keeps_its_place_when_capitals_lengthen_the_word():
    d = docx.Document()
    _run(d.add_paragraph(), "<w:t>Fuß</w:t><w:softHyphen/><w:t>ball und Fuß</w:t><w:softHyphen/>"
         "<w:t>weg.</w:t>")  # fmt: skip

    def respelled(sentences):  # "Fussball": neither the word nor its capitals
        return [(s.upper().replace("FUSSBALL", "Fussball"), [(i, i) for i in range(3)])
                for s in sentences]  # fmt: skip

    out = docx.Document(io.BytesIO(translate_docx(saved(d), upper, "de"))).paragraphs[0]
    assert _inner(out) == ["FUSS", "softHyphen", "BALL UND FUSS", "softHyphen", "WEG."]
    out = docx.Document(io.BytesIO(translate_docx(saved(d), respelled, "de"))).paragraphs[0]
    assert _inner(out) == ["Fussball UND FUSS", "softHyphen", "WEG."]
