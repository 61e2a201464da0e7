"""Markdown: whitespace a pair's markup holds next to a word outside it (`[w ](u)ab`,
`x[ w](u)`) stays inside that markup, and is not written again between the words."""

from fake_translate import same, upper

from translator.documents.markdown import translate_markdown


def test_whitespace_a_closing_holds_before_a_word_stays_inside_it():
    for text in ("[w ](u)ab**_\n", "<span> w </span>**\n", "****<span> w </span>**`c`\n",
                 "[<b>w </b>](u)ab\n", "[<b>w </b>](u) ab\n"):  # fmt: skip
        assert translate_markdown(text, same) == text
    assert translate_markdown("[w ](u)ab\n", upper) == "[W ](u)AB\n"
    assert translate_markdown("[<b>w </b>](u) ab\n", upper) == "[<b>W </b>](u) AB\n"


def test_whitespace_an_opening_holds_after_a_word_stays_inside_it():
    for text in ("[ [[ *](u)****\n", "[[ *](u)\n", "x[<b> w</b>](u)ab\n"):
        assert translate_markdown(text, same) == text
    assert translate_markdown("x[ w](u)\n", upper) == "X[ W](u)\n"


def test_a_lone_tag_written_inside_a_links_opening_stays_inside_it():
    for text in ('[<a href="v">c](u)\n', '[<a href="v">c d](u) <a href="v">[\n'):
        assert translate_markdown(text, same) == text
