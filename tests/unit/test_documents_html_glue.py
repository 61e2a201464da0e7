"""translate_html where whitespace and markup meet without a space: spaces inside a piece
copied whole at its ends, tags glued to the words around them, and punctuation a
translation glues to a tagged word."""

import pytest
from fake_translate import bracketed, reverse, same, upper
from util import skeleton

from translator.documents.html import translate_html


@pytest.mark.parametrize(
    "doc",
    [
        "<p>Press <kbd> Ctrl</kbd> and go.</p>",
        "<p>Press<kbd> Ctrl</kbd> and go.</p>",
        "<p>Press <kbd> Ctrl </kbd> and go.</p>",
        "<p>Press <kbd>Ctrl </kbd>and go.</p>",
        "<p>Press <kbd> Ctrl</kbd>.</p>",
        "<p>Run <code> a b </code> and go.</p>",
        "<p>Press <kbd> </kbd> go.</p>",
        "<p>Press <kbd> a</kbd><kbd> b</kbd> go.</p>",
    ],
)
def test_a_space_inside_a_piece_copied_whole_is_written_once(doc):
    assert translate_html(doc, same, None) == doc
    for translate in (upper, reverse, bracketed):
        out = translate_html(doc, translate, None)
        assert skeleton(out) == skeleton(doc)
        assert "  " not in out


@pytest.mark.parametrize(
    "doc, bracketed_",
    [
        (
            "<p>Er sah <b>den Hund</b>, dann</p>",
            "<p>(Er). (sah). (<b>den). (Hund</b>). (dann).</p>",
        ),
        ("<p>(<b>Hund</b>) und <i>Katze</i>.</p>", "<p>(<b>Hund</b>). (und). (<i>Katze</i>).</p>"),
        ('<p>Er sagt "<b>geh</b>" jetzt</p>', "<p>(Er). (sagt). (<b>geh</b>). (jetzt).</p>"),
        ("<p>Sieh <i>das</i>!</p>", "<p>(Sieh). (<i>das</i>).</p>"),
        ("<p>Ein <b>Hund,</b> x</p>", "<p>(Ein). (<b>Hund).</b> (x).</p>"),  # "," inside: stays
    ],
)
def test_a_translated_words_punctuation_stays_outside_a_tag_the_source_glued_other_signs_to(
    doc, bracketed_
):
    """A tag whose source starts or ends at a letter, with other punctuation glued outside it
    than the translation writes there, wraps the translated word's letters alone."""
    assert translate_html(doc, same, "de") == doc
    assert translate_html(doc, bracketed, "de") == bracketed_


@pytest.mark.parametrize(
    "doc",
    ["<p>z)<kbd>z)</kbd></p>", "<p>Geh a<kbd>a</kbd>a jetzt</p>", "<p>Geh <kbd>ab</kbd>ab</p>"],
)
def test_a_piece_copied_whole_stays_where_its_word_repeats_its_text(doc):
    assert translate_html(doc, same, None) == doc
