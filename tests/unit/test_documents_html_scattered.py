"""translate_html where the model scatters the text of a piece copied whole (`code`) among
the words it covers, with text glued outside the piece: every character of the source
survives, once (the piece is written from its source in place of its words, so what those
words hold beyond its text is what must be kept beside it)."""

import pytest
from util import html_keeps_all


@pytest.mark.parametrize(
    "doc",
    [
        "<p><b><i>a<code><code>. b.</code>(</code></i>!\t</b></p>",
        "<p><u><code><i>a<i>a\t</i>aa</i><i>!</i>.</code></u>(</p>",
    ],
)
def test_text_glued_to_a_piece_whose_own_text_the_words_scatter_is_kept(doc):
    # (the words hold each of the piece's characters, but not its words whole)
    html_keeps_all(doc)


@pytest.mark.parametrize(
    "doc",
    [
        "<p><b><code><b>x y  !</b></code></b>a</p>",
        "<p><b><b>aa<code>x y .</code>,</b>aa)</b></p>",
    ],
)
def test_an_element_opening_on_a_pieces_word_leaves_the_pieces_punctuation_to_it(doc):
    # (the punctuation the word begins with is the piece's: cut off before the element's
    # start tag, it was written twice, and the glued text after the piece was lost)
    html_keeps_all(doc)


@pytest.mark.parametrize(
    "doc",
    [
        "<p>.<code>a,<code>\t</code><i>a,</i></code>  </p>",
        '<p><a href="x"><b>x y</b></a><code> b. b.</code>(</p>',
    ],
)
def test_punctuation_between_a_pieces_words_in_order_is_kept(doc):
    # (glued outside the piece, the model moved it between the piece's own words)
    html_keeps_all(doc)
