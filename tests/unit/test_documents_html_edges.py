"""translate_html where elements meet the ends of sentences and units: elements left open
across a line break, words glued across two elements a sentence boundary lies in, and
pieces copied whole with spaces at a block's edge."""

import logging

import pytest
from fake_translate import bracketed, reverse, same, upper
from util import skeleton

from translator.documents.html import translate_html


@pytest.mark.parametrize(
    "doc",
    [
        "<p><b>Ein Buch<i><br></i></p>",
        '<li><a href="/">Start<span><br></span>',
        "<em>Ein Buch<sup><br></sup>",
        "<p><span><span>Er liest<br></span></p>",
        '<span lang="de"><sup>über<br/></sup>',
        "<em>n</em><o>t<em><br></em>",
        "<p><a>core</a><span>1.9<i><br></i></p>",
    ],
)
def test_an_element_left_open_across_a_line_break_is_translated(doc, caplog):
    # (an element opened in a unit's last word, closed only in the next unit)
    with caplog.at_level(logging.WARNING):
        assert translate_html(doc, same, None) == doc
    assert "never closed" in caplog.text or "is open" in caplog.text
    for translate in (upper, reverse, bracketed):
        translate_html(doc, translate, None)


def test_an_element_open_across_a_line_break_in_a_glued_word_is_written_once():
    doc = "<p>Er sah <a>x</a><span>y<i>z<br></i></span> heute.</p>"
    assert translate_html(doc, same, None) == doc
    for translate in (upper, reverse, bracketed):
        assert skeleton(translate_html(doc, translate, None), False) == skeleton(doc, False)


@pytest.mark.parametrize(
    "doc",
    [
        "<p><i>Ein Hund. Ein</i><b>Mann. Er läuft.</b></p>",
        "<p>Ein x<strong>Mann. Hund</strong></p>",
        "<p><i>Ein Hund. Ein</i><b>Mann.</b></p>",
        "<p><i>Ein Hund. Er sah Ein</i><b>Mann. Er läuft.</b></p>",
        "<p><i>Ein Hund. Ein</i>Mann. Er</p>",
    ],
)
def test_a_word_glued_across_elements_at_a_sentence_end_keeps_them_nested(doc):
    assert translate_html(doc, same, None) == doc
    for translate in (upper, reverse, bracketed):
        assert skeleton(translate_html(doc, translate, None), False) == skeleton(doc, False)


def test_a_word_glued_across_elements_keeps_its_edge_in_a_translation():
    doc = "<p><i>Ein Hund. Ein</i><b>Mann. Er läuft.</b></p>"
    assert translate_html(doc, upper, None) == "<p><i>EIN HUND. EIN</i><b>MANN. ER LÄUFT.</b></p>"


@pytest.mark.parametrize(
    "doc",
    [
        "<p>Geben Sie <code>make </code></p>",
        "<td><code> ls</code></td>",
        "<p>  <code> ls</code> ist gut. <code>x </code>  </p>",
    ],
)
def test_spaces_inside_code_at_a_block_edge_are_written_once(doc):
    assert translate_html(doc, same, None) == doc
    assert translate_html(doc, upper, None).count(" ") == doc.count(" ")
