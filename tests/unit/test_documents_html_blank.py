"""translate_html where an inline element holds whitespace alone ("a<b> </b>a"), and where
spans sharing words are written as in the source: the page comes back as it was under a
model that changes nothing, and well-formed under any."""

import pytest
from fake_translate import bracketed, recording, reverse, same, upper
from util import skeleton

from translator.documents.html import translate_html


@pytest.mark.parametrize(
    "doc",
    [
        "<p>a<b> </b>a</p>",
        "<p>a <b> </b> a</p>",
        "<p>a<b>  </b>a</p>",
        "<p>a<b>\t</b>a</p>",
        "<p>a<i><b> </b></i>a</p>",
        "<p><b> </b>a</p>",
        "<p>a<b> </b></p>",
        "<p>A b.<b> </b>C d.</p>",
        "<p><b>.<u>  </u></b><i>(</i></p>",
        "<p>aa.<i><a href='x'> </a>.</i></p>",
    ],
)
def test_an_element_holding_whitespace_alone_comes_back_as_it_was(doc):
    assert translate_html(doc, same, "en") == doc
    for translate in (upper, reverse, bracketed):
        assert skeleton(translate_html(doc, translate, "en")) == skeleton(doc)


def test_an_element_holding_whitespace_alone_goes_before_the_word_after_it():
    # (it parts the words itself: no space is written beside it)
    assert translate_html("<p>a<b> </b>a</p>", upper, "en") == "<p>A<b> </b>A</p>"
    assert translate_html("<p>a<b> </b>c d</p>", reverse, "en") == "<p>d<b> </b>c a</p>"
    assert translate_html("<p>a <b> </b> c d</p>", reverse, "en") == "<p>d <b> </b> c a</p>"


def test_it_does_not_join_the_sentences_around_it():
    translate, seen = recording(same)
    translate_html("<p>A b. <i>  </i>C d.</p>", translate, "en")
    assert seen == ["A b.", "C d."]


@pytest.mark.parametrize(
    "doc",
    [
        "<p><b>.</b><b><b><b>b</b>a</b> ba</b><u>a</u></p>",
        "<p><u><b>x y.a,</b>!<b><i>baba)</i></b></u><b><i>a</i>x y!</b></p>",
    ],
)
def test_a_span_opening_late_that_then_shares_its_last_word_is_written_as_in_the_source(doc):
    assert translate_html(doc, same, "en") == doc
    for translate in (upper, reverse, bracketed):
        assert skeleton(translate_html(doc, translate, "en")) == skeleton(doc)
