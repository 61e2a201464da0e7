"""Markdown: pieces with no words (lone tags, autolinks) after a paragraph's last word keep
their spacing, and links glued into one word stay links whatever order the words take."""

from fake_translate import fused, reverse, same
from markdown_it import MarkdownIt

from translator.documents.markdown import _parser, translate_markdown
from translator.documents.markdown_inline import read_inline


def _kinds(text):
    """The inline markup a page shows: each token but text (and code's words), sorted."""
    tokens = [t for t in MarkdownIt("commonmark").parse(text) if t.type == "inline"]
    return sorted(c.type + (c.content if c.type == "html_inline" else "")
                  for t in tokens for c in t.children
                  if c.type not in ("text", "softbreak"))  # fmt: skip


def test_tags_left_open_join_any_piece_beside_them_after_the_last_word():
    # tags no markup closed, placed only once the inline is read, beside pieces placed
    # at once that are not the last one placed
    for text in ("w <span><span><x@y.z><b>\n", "wab.\n<span><span><br><x@y.z>\n",
                 "<i>x</i>w <span><span><x@y.z><b>\n"):  # fmt: skip
        assert translate_markdown(text, same) == text


def test_a_piece_after_a_tag_left_open_takes_only_the_space_after_the_tag():
    for text in ("y <br>\n<x@y.z>\n", "y  <b> <x@y.z> <span><x@y.z>\n",
                 "*a b*ab.  \n<b> <br>  <x@y.z>\n"):  # fmt: skip
        assert translate_markdown(text, same) == text


def test_tags_left_open_join_pieces_behind_whitespace_still_to_be_taken_out():
    # the tags are demoted together and the whitespace the first took is taken out last:
    # <br> joins the autolink before it, placed behind that whitespace; the span holding
    # no words is one piece with the autolink inside it
    src = "<br><b>  <x@y.z><br>  <span> <x@y.z></span>"
    children = _parser().parseInline(src)[0].children
    _, spans, _ = read_inline(src, children)
    assert [m.raw for _, _, m in spans if m.kind == "lead"] == [
        "<br><b>  ", "<x@y.z><br>  ", "<span> <x@y.z></span>"]  # fmt: skip


def test_links_glued_into_one_word_are_never_written_one_inside_the_other():
    # CommonMark reads a link inside a link as text: the markup would be lost
    cases = {
        "[l](u)[l](u)`c d`\n": reverse,
        "*a b*[l](u) y`c d`<i>x</i>[l](u)[l](u)\n": reverse,
        "[l](u)<i>x</i>[l](u)`c d` y\n": reverse,
        "[l](u)[m](u) w\n": fused,
        "a [b lm](u)[n](v) w\n": fused,
        "a [lm](u)[n b](v) w\n": fused,
        "[l](u)[m](u)`c d` w\n": fused,
        "[lm n](v)[x][][l](u)[*a*](u)\n": reverse,  # (the one running on goes last)
    }
    for text, translate in cases.items():
        got = translate_markdown(text, translate)
        assert _kinds(got) == _kinds(text), (text, got)
        assert translate_markdown(text, same) == text


def test_more_links_than_letters_in_one_word_stay_links():
    # three links on two letters: the last is left no text, and written `[](w)`
    assert translate_markdown("[l](u)[m](v)[l](w)\n", fused) == "[Q](u)[Q](v)[](w)\n"
    text = "lmlm[*a*](u)lm[l](u)[*a*](u)[*a*](u)\n"  # (a cut at the word's end: no further)
    got = translate_markdown(text, fused)
    assert got.count("](u)") == text.count("](u)") and "[](u)" in got, got


def test_a_piece_before_a_word_inside_a_code_spans_word_is_kept():
    # the word it was glued to went inside an atom's joined words
    text = "[l](u)  `c d`<x@y.z><b> <x@y.z>[l](u)`c d`\n"
    got = translate_markdown(text, reverse)
    assert _kinds(got) == _kinds(text), got
