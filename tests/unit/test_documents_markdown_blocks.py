"""Markdown: a paragraph's translation stays one paragraph whatever order a model gives its
words: no line of it blank, or read by CommonMark as an HTML block's start."""

from fake_translate import reverse
from markdown_it import MarkdownIt

from translator.documents.markdown import _parser, translate_markdown
from translator.documents.markdown_blocks import unblocked


def _read(text):
    """The blocks of `text` and its inline markup (but text), sorted."""
    tokens = MarkdownIt("commonmark").parse(text)
    inline = sorted(c.type + (c.content if c.type == "html_inline" else "")
                    for t in tokens if t.type == "inline" for c in t.children
                    if c.type not in ("text", "softbreak"))  # fmt: skip
    return [t.type for t in tokens if t.type != "inline"], inline


def test_a_tag_alone_on_a_paragraphs_first_line_is_joined_with_the_next():
    # `<br>` alone on a first line opens an HTML block (it cannot interrupt a paragraph)
    for text in ("[l](u)<br>\n<b> <x@y.z>`c d`\n", "<br> y\n <b> y<br>[l](u)\n<x@y.z>\n",
                 "w<b>\n<span> <br><i>x</i>w\n"):  # fmt: skip
        got = translate_markdown(text, reverse)
        assert _read(got) == _read(text), (text, got)


def test_a_block_tag_first_on_a_line_goes_after_the_lines_first_word():
    # `<div>`, `<p>`, `<pre>`, a comment open an HTML block wherever the line goes on
    cases = {
        "a  <div>`e f`\n": "`e f`<div> a\n",
        "> y*a b*<p>\n  <x@y.z>\n  ab.[l](u)<div>\n": "> <x@y.z>ab.[l](u) <p> *b\n  ya*<div>\n",
    }
    for text, want in cases.items():
        got = translate_markdown(text, reverse)
        assert got == want and _read(got) == _read(text), (text, got)


def test_no_line_of_a_paragraph_is_left_blank_or_indented_as_code():
    for text in ("- <i>x</i>w\n <b><p> y`c d`\n", "`c d`<b><b> y    <p><span> \n[l](u)\n",
                 "> <x@y.z>[l](u)w<i>x</i>\n    <pre>  `c d`<i>x</i>\n"):  # fmt: skip
        got = translate_markdown(text, reverse)
        assert _read(got) == _read(text), (text, got)


def test_lines_that_end_no_paragraph_are_kept():
    md = _parser()
    # a lone tag may stand alone on a line after the first; an indented one is prose
    for text in ("a b\n<br>", "a b\n    <div> c", "<b> a\n<i>x</i> <x@y.z>"):
        assert unblocked(md, text, text) == text
    # a line the source began with a block tag (a setext heading's, say) stays so
    assert unblocked(md, "<div> a b", "<div> b a") == "<div> a b"
    # where no move keeps the markup (code runs on after the tag), the line stays
    assert unblocked(md, "<div>`a\nb` c", "c `a\nb` <div>") == "<div>`a\nb` c"
