"""translate_html where elements end inside a word and the word goes on after their end
tags ("<b><i>ba</i></b>a,"): the text glued after them stays outside them, whatever the
case the model writes it in, and the translation's own punctuation stays outside every
element ending at the word's letters."""

import pytest
from fake_translate import bracketed, reverse, same, upper
from util import html_capitals, skeleton

from translator.documents.html import translate_html


@pytest.mark.parametrize(
    "doc",
    [
        "<p><b><i>ba</i></b>a</p>",
        "<p><b>ba</b>a</p>",
        "<p><b><i>ba</i></b>a,</p>",
        "<p><b>ba</b>a.</p>",
        "<p><b><i>ba</i></b>aa. x y</p>",
        "<p>x <b>ba</b>ab, y z.</p>",
        "<p>x <b><u><i>ba</i></u></b>a! y</p>",
        "<p>(<b>Hund</b>en).</p>",
        "<p><b><i>b</i>.aa</b>.!</p>",
    ],
)
def test_the_text_glued_after_end_tags_stays_outside_them_in_capitals(doc):
    assert translate_html(doc, same, "en") == doc
    assert translate_html(doc, upper, "en") == html_capitals(doc)
    assert skeleton(translate_html(doc, reverse, "en")) == skeleton(doc)


@pytest.mark.parametrize(
    "doc, expected",
    [
        ("<p><b><i>ba</i></b>a, x y.</p>", "<p>y. x <b><i>ba</i></b>a,</p>"),
        ("<p>x <b>ba</b>ab, y z.</p>", "<p>z. y <b>ba</b>ab, x</p>"),
    ],
)
def test_the_text_glued_after_end_tags_moves_with_its_word(doc, expected):
    assert translate_html(doc, reverse, "en") == expected


@pytest.mark.parametrize(
    "doc, expected",
    [
        ("<p><b>ba</b>a.</p>", "<p>(<b>baa</b>).</p>"),
        ("<p><b><i>ba</i></b>a.</p>", "<p>(<b><i>baa</i></b>).</p>"),
        ("<p>x <b><u><i>ba</i></u></b>a! y</p>", "<p>(x). (<b><u><i>baa</i></u></b>). (y).</p>"),
        ("<p><b><b><b>aa</b></b>!</b></p>", "<p><b>(<b><b>aa</b></b>).</b></p>"),
    ],
)
def test_a_translation_s_own_punctuation_stays_outside_each_element_ending_at_letters(
    doc, expected
):
    assert translate_html(doc, bracketed, "en") == expected
