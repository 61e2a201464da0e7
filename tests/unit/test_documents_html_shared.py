"""translate_html where pieces and elements share one word: a piece copied whole glued to
the text of an element around it or beside it, an empty piece glued inside a word that an
element goes on in, and two elements meeting inside a word."""

import html
import re
from collections import Counter

import pytest
from fake_translate import bracketed, reverse, same, upper
from util import skeleton

from translator.documents.html import translate_html


def _letters(doc: str) -> Counter:
    """The text's characters but whitespace, in any case (a piece copied whole keeps its
    source's case)."""
    return Counter(re.sub(r"\s", "", html.unescape(re.sub(r"<[^>]*>", "", doc)).lower()))


@pytest.mark.parametrize(
    "doc",
    [
        # a piece copied whole beside an element sharing its first word
        "<p>Dog a )<b> a</b>z)<kbd>1 w,</kbd></p>",
        "<p>Go <code>(y bc</code><a>z)</a> now</p>",
        "<p>Go <a>x</a><code>y z</code> now</p>",
        # a piece copied whole inside an element glued to the word before it
        "<p>a<b><code>y</code></b></p>",
        "<p>Go a<b><code>y </code></b> now</p>",
        "<p>Go <span><code>Dog</code></span>w, z)</p>",
        # two elements opening at one place inside a word
        "<p>, z)<em><a><kbd>z)( <img></kbd></a></em></p>",
        "<p>Go a<b><i>ab</i></b> now</p>",
        # an element of one word glued to the next element, a piece copied whole opening
        # in that word
        "<p>Go <em>w,</em><i><code>1(y</code> z)</i> now</p>",
    ],
)
def test_text_is_written_once(doc):
    assert translate_html(doc, same, None) == doc
    assert _letters(translate_html(doc, upper, None)) == _letters(doc)
    for translate in (upper, reverse, bracketed):
        assert skeleton(translate_html(doc, translate, None)) == skeleton(doc)


@pytest.mark.parametrize(
    "doc",
    [
        # an empty piece glued inside a word, before an element the word goes on in
        "<p>Go a<!--c--><b>x</b> now</p>",
        "<p>Go a<!--c-->x<b>y</b> now</p>",
        "<p>Go a<img>b<!--c--><code>x</code> now</p>",
        "<p>Go bc<a><img>w,Dog</a> now</p>",
        # empty pieces at the end of a word, after one inside it
        "<p>Go a<wbr>)<img> z)</p>",
        "<p>Go z) <kbd> w,</kbd><img>a now</p>",
        # an empty piece before an element that wraps the rest of the unit
        "<p><wbr> <b> <img><i>w,</i></b></p>",
        # two elements of several words sharing one word
        "<p>Go <b>a b</b>c<i>d e</i> now</p>",
        "<p>Go <b>a b<!--c--></b>c<i>d e</i> now</p>",
        # an element of one word glued to the next element, of several words
        "<p>Go <em>w,</em><b>1(y z)</b> now</p>",
        "<p>Go <em>w</em>,<b>1(y z)</b> now</p>",
        "<p>Go <em>w,</em><i><wbr>1(y z)</i> now</p>",
        "<p>Go <em>w,</em><i>1<b>(</b>y z)</i> now</p>",
        # an element's text after a child's end, in one word
        "<p>Go <span><i>)</i>(a</span> now</p>",
    ],
)
def test_markup_keeps_its_place(doc):
    assert translate_html(doc, same, None) == doc
    for translate in (upper, reverse, bracketed):
        assert skeleton(translate_html(doc, translate, None)) == skeleton(doc)


@pytest.mark.parametrize(
    "doc",
    ["<p>Press<kbd> </kbd>go.</p>", "<p>Press<kbd> </kbd> go.</p>", "<p>Press<kbd>  </kbd>go.</p>"],
)
def test_a_piece_of_whitespace_glued_on_both_sides_parts_the_words_alone(doc):
    assert translate_html(doc, same, None) == doc
    assert translate_html(doc, upper, None) == doc.replace("Press", "PRESS").replace("go", "GO")


def _renamed(sentences):
    """Each sentence with its y's as z's, word i aligned to word i: a word holding a piece
    copied whole whose text the translation does not keep."""
    return [(s.replace("y", "z"), [(i, i) for i in range(len(s.split()))]) for s in sentences]


@pytest.mark.parametrize(
    ("doc", "out"),
    [
        ("<p>Go a<b><code>y</code></b> now</p>", "<p>Go a<b><code>y</code></b> now</p>"),
        ("<p>Go a<b><code>y</code>s</b> now</p>", "<p>Go a<b><code>y</code>s</b> now</p>"),
    ],
)
def test_a_piece_copied_whole_writes_none_of_the_text_its_element_writes(doc, out):
    assert translate_html(doc, _renamed, None) == out


def test_an_element_glued_after_one_of_one_word_is_translated():
    doc = "<p><b>Note</b><span>: long text here.</span></p>"
    assert translate_html(doc, same, None) == doc
    assert translate_html(doc, upper, None) == "<p><b>NOTE</b><span>: LONG TEXT HERE.</span></p>"


@pytest.mark.parametrize(
    ("doc", "out"),
    [
        (
            "<p>Go <em>w,</em><i><wbr>1(y z)</i> now</p>",
            "<p>Go <em>w,1(z</em> <i><wbr>z)</i> now</p>",
        ),
        (
            "<p>Go <em>w,</em><i>1<b>(</b>y z)</i> now</p>",
            "<p>Go <em>w,1(z</em> <i><b></b>z)</i> now</p>",
        ),
    ],
)
def test_tags_opening_in_a_trail_the_translation_does_not_keep_open_before_the_next_word(doc, out):
    assert translate_html(doc, _renamed, None) == out
