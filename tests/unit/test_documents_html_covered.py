"""translate_html where a piece copied whole (`code`) shares a word with the text around
another element: the piece's text is written once, by the piece, and no other character
of the source is lost (a lead cut before a tag, or a sibling's trail written after one,
must not take the piece's text a second time)."""

import pytest
from util import html_keeps_all

from translator.documents.html_covered import holds
from translator.documents.html_glue import outside


@pytest.mark.parametrize(
    "doc",
    [
        "<p>!<b>x <code>!</code></b>: </p>",
        "<p>b<b>. <code>a ba</code></b>a</p>",
        "<p>!<b><u>aaba<code><u>,  x y</u></code></u><code> <code>!</code></code></b>: </p>",
    ],
)
def test_a_lead_is_not_cut_from_the_text_a_piece_copied_whole_needs(doc):
    # (reversed, the piece's word comes first in the element: "!:" holds the code's "!",
    # not the "!" that stood before <b>)
    html_keeps_all(doc)


def test_the_lead_left_in_the_word_is_written_beside_the_piece():
    assert (
        html_keeps_all("<p>!<b>x <code>!</code></b>: </p>") == "<p><b><code>!</code>: !x</b> </p>"
    )


@pytest.mark.parametrize(
    "doc",
    [
        "<p>c <u>b.</u><i><code>)</code> a,</i></p>",
        "<p><u><u>b.</u><i><code>)</code> a,</i></u></p>",
        "<p>c <b>d</b><u><code>aa</code> e</u></p>",
        '<p><a href="x"><b>,</b><u><code>aa</code> )</u>a</a>! </p>',
    ],
)
def test_a_piece_opening_in_a_siblings_trail_is_written_once_when_they_part(doc):
    # (reversed, the element the piece opens opens before its sibling closes: the piece
    # is written there, and the sibling's trail keeps only what lies outside it)
    html_keeps_all(doc)


def test_the_siblings_trail_without_the_piece():
    assert html_keeps_all("<p>c <u>b</u><i><code>)</code> a</i></p>") == (
        "<p><i><code>)</code>a</i> <u>b</u> c</p>"
    )


def test_holds_finds_the_text_whole_turned_or_scattered():
    assert holds(["!:"], "!")
    assert not holds([":"], "!")
    assert holds(["baa", "a"], "a ba")
    assert not holds(["aa", "a"], "a ba")
    assert holds(["x"], "  ")


def test_outside_keeps_the_trail_text_no_piece_writes():
    pieces = [("<i>", 0), ("<code>)</code>", 1), (None, 2), ("</i>", 0)]
    assert outside(pieces, ")ab") == "ab"
    assert outside([("<code>)</code>", 1)], ")") == ""
