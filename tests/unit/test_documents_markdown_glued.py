"""Markdown: markup glued to other markup with no space between (a code span right
before emphasis, two emphases around one word) comes back as it was."""

import pytest
from fake_translate import reverse, same, upper
from markdown_it import MarkdownIt

from translator.documents.markdown import translate_markdown


def _kinds(text):
    """The inline markup a page shows, in order: each token but text (and code's words)."""
    tokens = MarkdownIt("commonmark").parseInline(text)[0].children
    return [t.type + (t.content if t.type == "html_inline" else "") for t in tokens
            if t.type not in ("text", "softbreak")]  # fmt: skip


# the second piece of markup opens inside the word where the first one closes
SHARED = {
    "emphasis after a code span": ("`c d`*a b* and `e f`ab.*a b*\n",
                                   "`c d`*A B* AND `e f`AB.*A B*\n"),
    "a code span after emphasis": ("*a b*`c d` and *a b*w`c d`\n",
                                   "*A B*`c d` AND *A B*W`c d`\n"),
    "emphasis after emphasis": ("*a b*w*a b* and *a b*[l](u)*a b*\n",
                                "*A B*W*A B* AND *A B*[L](u)*A B*\n"),
}  # fmt: skip


@pytest.mark.parametrize("case", SHARED)
def test_markup_sharing_a_word_with_markup_before_it_opens_where_it_did(case):
    text, capitals = SHARED[case]
    assert translate_markdown(text, same) == text
    assert translate_markdown(text, upper) == capitals
    got = translate_markdown(text, reverse)  # (words move: the markup stays well-formed)
    assert sorted(_kinds(got)) == sorted(_kinds(text)), got


def test_pieces_with_no_words_joined_before_the_first_word_keep_its_space():
    for text in ("<span><x@y.z> y\n", "<b><x@y.z>   y z.\n"):
        assert translate_markdown(text, same) == text


def test_a_piece_inside_a_code_spans_word_comes_before_one_after_it():
    for text in ("`c d`<b><br><x@y.z>\n", "A `c d`<span><x@y.z><span>\n"):
        assert translate_markdown(text, same) == text
