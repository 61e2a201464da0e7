"""Markdown: markup at the edge of a sentence, where the text is cut into units that are
translated apart, keeps the whitespace between sentences as the source wrote it."""

from fake_translate import reverse, same, upper

from translator.documents.markdown import translate_markdown


def test_a_space_a_links_closing_holds_between_two_sentences_is_written_once():
    for text, reversed_ in (
        ("[Hello world. ](u)Next one here.\n", "[world. Hello ](u)here. one Next\n"),
        ("[Hello world. ](u)<br>Next one here.\n", "[world. Hello ](u)here. one <br>Next\n"),
        ("<b>Hello world. </b>Next one here.\n", "<b>world. Hello </b>here. one Next\n"),
        ("Hello world.[ Next one](u) here.\n", "world. Hello here.[ one Next](u)\n"),
        ("One. [Hello world. ](u)Next one.\n", "One. [world. Hello ](u)one. Next\n"),
    ):
        assert translate_markdown(text, same) == text
        assert translate_markdown(text, upper) == text.upper().replace("](U)", "](u)").replace(
            "<BR>", "<br>"
        ).replace("B>", "b>")
        assert translate_markdown(text, reverse) == reversed_


def test_a_tag_before_a_line_break_in_a_closing_stays_before_it():
    for text, reversed_ in (
        ("Aa <span>bb cc<br>\n</span>dd.\n", "dd. <span>cc bb<br>\n</span>Aa\n"),
        (
            "Dog <span>hello.<x@y.z>\n</span>Next one.\n",
            "<span>hello.<x@y.z>\n</span> Dog one. Next\n",
        ),
    ):
        assert translate_markdown(text, same) == text
        assert translate_markdown(text, reverse) == reversed_


def test_a_no_break_space_written_as_an_entity_stays_so():
    for text in ("a&nbsp;b\n", "Hello&nbsp;world. Next one.\n", "[Hello&nbsp;](u)next\n",
                 "x[&nbsp;Hello](u)\n", "[Hello world.&nbsp;](u)Next one here.\n"):  # fmt: skip
        assert translate_markdown(text, same) == text
    assert translate_markdown("[Hello&nbsp;](u)next\n", reverse) == "next [Hello&nbsp;](u)\n"
