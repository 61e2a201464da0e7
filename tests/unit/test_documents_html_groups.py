"""translate_html round a piece copied whole (`code`) and the elements around it: a sibling
opening in the word where such a piece's group ends joins the group rather than cutting
the group's end tag off into its own lead (which lost the group's text and markup), and
the text glued outside an element holding a piece survives the model turning round the
words the piece covers."""

import re

import pytest
from fake_translate import bracketed, reverse, same, upper
from util import html_text, skeleton

from translator.documents.html import translate_html


@pytest.mark.parametrize(
    "doc",
    [
        "<p><u><i>, </i>(</u><code>,,</code><b>a,</b></p>",
        "<p><u>x (</u><code>y</code><b>z w</b></p>",
        "<p><u>x (</u><code>y</code><img><b>z</b> w</p>",
        "<p><u>x y (</u><code>y</code>z<img><b>z</b> w</p>",
    ],
)
def test_a_sibling_opening_where_a_group_ends_keeps_the_group_whole(doc):
    assert translate_html(doc, same, "en") == doc
    for translate in (upper, reverse, bracketed):
        out = translate_html(doc, translate, "en")
        assert skeleton(out) == skeleton(doc)
        assert sorted(re.findall(r"<[^>]*>", out)) == sorted(re.findall(r"<[^>]*>", doc))
        if translate is not bracketed:  # (which rewrites each word's punctuation)
            assert html_text(out) == html_text(doc)


@pytest.mark.parametrize(
    "doc",
    [
        "<p>aa<b><code>x y</code></b></p>",
        "<p><b><code>x y</code></b>. z</p>",
        "<p>!<u><code>bx y</code></u></p>",
        "<p>b<b><code>: <i>: </i></code> </b></p>",
    ],
)
def test_text_glued_round_an_element_holding_a_piece_survives_its_words_turned_round(doc):
    # (the piece is written in place of the words it covers: those words also hold the
    # text glued outside the element, which the model moved among them)
    assert translate_html(doc, same, "en") == doc
    out = translate_html(doc, reverse, "en")
    assert skeleton(out) == skeleton(doc)
    assert html_text(out) == html_text(doc)
