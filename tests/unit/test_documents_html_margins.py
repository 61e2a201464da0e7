"""translate_html keeps the whitespace between an element's tag and a sentence's first or
last word inside that element, where an element opens before the words or closes after."""

import re

from fake_translate import reverse, same

from translator.documents.html import translate_html

UNDERSCORE = (
    "<p>\n  <i>\n    Note: functions work on objects such as</i> <tt>arguments</tt>,"
    " <tt>NodeList</tt><i>\n    and similar. Use <b>_.find</b>\n    instead.\n  </i>\n</p>"
)


def test_whitespace_inside_an_element_at_a_sentences_start_and_end_stays_inside():
    assert translate_html(UNDERSCORE, same, "en") == UNDERSCORE


def test_a_space_closing_an_element_after_a_sentence_stays_inside_it():
    doc = '<h3><span class="section-number">2.1. </span>Removal of the packages</h3>'
    assert translate_html(doc, same, "en") == doc


def test_nested_elements_opening_in_the_whitespace_keep_theirs_in_order():
    doc = "<p>\n <i>\n  <b>\n   Note a</b> b, c<i>\n d.\n </i>\n  </i>\n</p>"
    assert translate_html(doc, same, "en") == doc


def test_where_the_words_are_reordered_the_whitespace_is_written_once_outside():
    # (the elements no longer open before the first word or close after the last)
    out = translate_html(UNDERSCORE, reverse, "en")
    assert out.startswith("<p>\n  \n    <i>instead. ")
    assert out.endswith("\n    Note</i>:\n  \n</p>")


def test_a_piece_in_that_whitespace_or_an_element_holding_no_words_is_never_lost():
    # (an element there takes no whitespace inside: the unit writes the piece in place)
    for doc in [
        "<p>1\n  x.\n  <em>\n  <wbr> <span>\n  z)\n  </span></em></p>",
        "<p>w,x.\n  <i> </i>\n  <!--c--> y<img> z <img></p>",
    ]:
        out = translate_html(doc, same, "en")
        assert sorted(re.findall(r"<[^>]*>", out)) == sorted(re.findall(r"<[^>]*>", doc))
        assert re.sub(r"<[^>]*>|\s", "", out) == re.sub(r"<[^>]*>|\s", "", doc)
