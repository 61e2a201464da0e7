"""translate_html where two sibling elements share a word and neither can be cut at it:
a piece copied whole inside the second crosses that word, so both are written as in the
source, their text once."""

import pytest
from fake_translate import bracketed, reverse, same, upper
from util import html_capitals, skeleton

from translator.documents.html import translate_html


@pytest.mark.parametrize(
    "doc",
    [
        "<p><em><wbr>)</em><i><wbr><code>, <b>(y</b></code></i></p>",
        "<p>x <b>a</b><i><code>b c</code> d e f</i> g</p>",
        "<p>x <b>a</b><i><u>b c</u> d e f</i> g</p>",
    ],
)
def test_siblings_sharing_a_word_keep_their_text_once(doc):
    assert translate_html(doc, same, "en") == doc
    for translate in (upper, reverse, bracketed):
        out = translate_html(doc, translate, "en")
        assert skeleton(out) == skeleton(doc)


@pytest.mark.parametrize(
    "doc",
    [
        "<p><b>x 1</b><img><a>bc</a> z</p>",
        "<p>,<b>) 1</b><wbr><a>bc</a> z)</p>",
        "<p><b>x 1</b><!--c--><a>bc</a> z</p>",
    ],
)
def test_an_element_ending_in_the_word_an_image_is_glued_in_keeps_its_text(doc):
    assert translate_html(doc, same, "en") == doc
    assert translate_html(doc, upper, "en") == html_capitals(doc)


@pytest.mark.parametrize(
    "doc",
    [
        "<p><span>x y</span><b>a</b></p>",
        "<p><span> z) Dog</span><b>a </b></p>",
        "<p>,<b>) 1</b><wbr><a>bc</a> z)</p>",
    ],
)
def test_an_end_tag_cut_into_a_sibling_s_word_is_written_when_the_words_turn_round(doc):
    out = translate_html(doc, reverse, "en")
    assert skeleton(out) == skeleton(doc)
    assert out.count("</") == doc.count("</")


@pytest.mark.parametrize("doc", ["<p><b>x 1</b>bc z</p>", "<p><b>x 1</b><img>bc z</p>"])
def test_the_text_glued_after_an_end_tag_stays_outside_it_in_capitals(doc):
    assert translate_html(doc, upper, "en") == html_capitals(doc)


@pytest.mark.parametrize(
    "doc",
    [
        "<p>A b <i>c d. E f</i> g.</p>",
        "<p><i>A b</i> c <i>d. E f</i></p>",
        "<p>A <i>b. C d.</i> E f. G h.</p>",
    ],
)
def test_an_element_crossing_sentences_mid_sentence_keeps_its_words(doc):
    assert translate_html(doc, same, "en") == doc
    assert translate_html(doc, upper, "en") == html_capitals(doc)
    assert skeleton(translate_html(doc, reverse, "en")) == skeleton(doc)


@pytest.mark.parametrize(
    "doc", ['<p>Project <a href="x">\n    DocBook</a> now.</p>', "<p>A <b> c d</b> e</p>"]
)
def test_whitespace_after_a_start_tag_stays_after_it(doc):
    assert translate_html(doc, same, "en") == doc
