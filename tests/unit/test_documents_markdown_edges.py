"""Markdown: tags with no words at the inner edge of a pair's markup (right after its
opening, right before its closing) stay there, and literal delimiters in a link stay in it
when the words are reordered."""

from fake_translate import reverse, same
from markdown_it import MarkdownIt

from translator.documents.markdown import translate_markdown


def _kinds(text):
    """The inline markup a page shows: each token but text, sorted."""
    tokens = [t for t in MarkdownIt("commonmark").parse(text) if t.type == "inline"]
    return sorted(c.type + (c.content if c.type == "html_inline" else "")
                  for t in tokens for c in t.children if c.type != "text")  # fmt: skip


def test_a_lone_tag_at_the_start_of_a_links_text_stays_in_the_link():
    text = "x [<br> c d](u) y\n"
    assert translate_markdown(text, same) == text
    assert translate_markdown(text, reverse) == "y [<br> d c](u) x\n"


def test_tags_at_the_inner_edges_of_emphasis_and_links_keep_their_place():
    for text in ("****w w[l](u)</span>**\n", "*b<br>* b\n", "**a<span>**\n",
                 "_* </span>_\n", "[ b<span>](u)\n", "**<br>a<br>**\n", "x *<br> c d* y\n",
                 "x **a <b>** c\n", "_[l](u)</span>_\n", "**c*</span>**\n"):  # fmt: skip
        assert translate_markdown(text, same) == text, text
        got = translate_markdown(text, reverse)
        assert _kinds(got) == _kinds(text), (text, got)


def test_emphasis_inside_emphasis_keeps_its_delimiter_where_markup_parts_them():
    # (a tag in the outer's closing, or strong between them: no `_` for the inner)
    for text in ("**c*</span>**\n", "****b[[*<br>****\n", "****](u)*</span>****\n"):
        assert translate_markdown(text, reverse) == text
        assert translate_markdown(text, same) == text
    assert translate_markdown("*_a_*\n", reverse) == "*_a_*\n"


def test_a_literal_delimiter_in_a_link_stays_in_it_when_the_words_are_reordered():
    # outside the link, the `*` of `b*` would close the emphasis before `a`
    text = "*a [b* c](u) d*\n"
    got = translate_markdown(text, reverse)
    assert got == "*d [c b*](u) a*\n"
    assert _kinds(got) == _kinds(text)
    for text in ("*a [b* c](u)\n", "[a *b](u) c*\n"):
        got = translate_markdown(text, reverse)
        assert _kinds(got) == _kinds(text) and sorted(got) == sorted(text), (text, got)
