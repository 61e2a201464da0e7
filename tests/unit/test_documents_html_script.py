"""translate_html: the text of script, style and svg is never read, and empty pieces
(images, comments) keep the whitespace around them."""

import pytest
from fake_translate import recording, reverse, same, upper

from translator.documents.html import translate_html
from translator.documents.html_units import tokens


def markup(text):
    return [t.raw for t in tokens(text) if t.kind != "text"]


@pytest.mark.parametrize(
    ("doc", "read"),
    [
        ("<p>Run <code>x<script>var s = 1;</script></code> now.</p>", ["Run x now."]),
        ("<p>a<svg><style>.c{fill:red}</style><script>alert(1)</script></svg> b</p>", ["a b"]),
        ("<p>a <span translate=no>x<script>s()</script></span> b</p>", ["a x b"]),
        ("<p>Run <span>x<script>s()</script></span> now.</p>", ["Run x now."]),
        ("<p>One <style>p{}</style> two.</p>", ["One two."]),
    ],
)
def test_script_style_and_svg_text_never_reaches_the_model(doc, read):
    translate, seen = recording(same)
    assert translate_html(doc, translate, "en") == doc
    assert seen == read
    out = translate_html(doc, reverse, "en")
    assert markup(out) == markup(doc)


def test_a_script_inside_an_inline_element_stays_in_it():
    doc = "<p>Run <span>x<script>s()</script></span> now.</p>"
    assert (
        translate_html(doc, reverse, "en") == "<p>now. <span>x<script>s()</script></span> Run</p>"
    )


@pytest.mark.parametrize(
    "doc",
    [
        "<p>Call twice. <img src=x> ok.</p>",
        "<p>a <!-- c --> b.</p>",
        "<p>a  <img>   <img> b.</p>",
        "<p>One two. <img src=x> Three four.</p>",
        "<p>a </i> b</p>",
    ],
)
def test_an_empty_piece_between_words_keeps_the_whitespace_around_it(doc):
    assert translate_html(doc, same, "en") == doc


@pytest.mark.parametrize(
    "doc",
    [
        '<h1>Constant <span class="c">_CMP_<wbr>FALSE_<wbr>OS</span> <button>x</button></h1>',
        "<p>a <b>x86_<wbr>64</b> b</p>",
        "<p>a <b><i>x86_<wbr>64</i></b> b</p>",
    ],
)
def test_empty_pieces_inside_a_word_leave_its_end_in_the_element(doc):
    assert translate_html(doc, same, "en") == doc


@pytest.mark.parametrize(
    ("doc", "out"),
    [
        ("<p>a <b>x86_<wbr>64</b> b</p>", "<p>A <b>X86_<wbr>64</b> B</p>"),
        ("<p>a <b>x_<wbr>os</b> b</p>", "<p>A <b>X_<wbr>OS</b> B</p>"),  # (its rest in any case)
    ],
)
def test_a_changed_word_with_empty_pieces_stays_whole_in_the_element(doc, out):
    assert translate_html(doc, upper, "en") == out
