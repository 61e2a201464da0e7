"""translate_html writes each character as its source spelled it where the words come back
as they were, and as the page usually spells it in translated words."""

import html
import re

from fake_translate import reverse, same, upper

from translator.documents.html import build, translate_html
from translator.documents.html_units import tokens

RUSTDOC = (
    '<ul><li><a href="#b" title="Borrow&#60;T&#62;">Borrow&#60;T&#62;</a></li></ul>'
    "<p>Implements <code>From&lt;T&gt;</code> for Vec&lt;T&gt; values.</p>"
)


def test_a_character_the_page_spells_two_ways_keeps_each_spelling_when_unchanged():
    assert translate_html(RUSTDOC, same, "en") == RUSTDOC


def test_translated_words_take_the_pages_usual_spelling():
    out = translate_html(RUSTDOC, upper, "en")
    assert ">BORROW&lt;T&gt;</a>" in out
    assert "VEC&lt;T&gt; VALUES." in out


def test_plain_signs_and_letters_the_source_wrote_plainly_come_back_plainly():
    doc = (
        "<p>Examples are <tt>zpipe < foo.txt > foo.txt.z</tt> to compress.</p>"
        "<p>Use it if you’re feeling lucky; you&rsquo;re warned.</p>"
    )
    assert translate_html(doc, same, "en") == doc


def test_an_unchanged_sentence_keeps_its_numeric_references():
    doc = "<p>Mail nas<span>&#64;</span>debian<span>&#46;</span>org or 0&#46;12 &copy; now.</p>"
    assert translate_html(doc, same, "en") == doc


def test_a_plain_lt_or_amp_is_escaped_where_a_tag_or_a_reference_could_follow():
    doc = "<p>a <<b>b</b> & c &<i>d</i> e.</p>"
    out = translate_html(doc, same, "en")
    assert out == "<p>a &lt;<b>b</b> & c &amp;<i>d</i> e.</p>"
    for model in (same, reverse, upper):
        out = translate_html(doc, model, "en")
        build(tokens(out))  # well-formed
        text = html.unescape(re.sub(r"<[^>]*>", "", out))
        assert sorted(re.sub(r"\s", "", text.lower())) == sorted("a<b&c&de.")
