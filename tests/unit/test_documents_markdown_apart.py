"""Markdown: markup glued into one word with other markup (code spans, links, emphasis) and
markup holding no words come back as the source had them, and never as other markup."""

from fake_translate import fused, reverse, same
from markdown_it import MarkdownIt

from translator.documents.markdown import translate_markdown


def _children(text):
    tokens = [t for t in MarkdownIt("commonmark").parse(text) if t.type == "inline"]
    return [c for t in tokens for c in t.children if c.type not in ("text", "softbreak")]


def _kinds(text):
    """The inline markup a page shows, sorted: each token but text (and code's words)."""
    return sorted(c.type + (c.content if c.type == "html_inline" else "") for c in _children(text))


def _depth(text):
    """How deep links (Markdown's or HTML <a>) are written inside one another."""
    depth = worst = 0
    for c in _children(text):
        html = c.type == "html_inline"
        depth += c.type == "link_open" or (html and c.content.startswith("<a "))
        depth -= c.type == "link_close" or (html and c.content.startswith("</a"))
        worst = max(worst, depth)
    return worst


def test_a_lone_tag_between_glued_code_spans_stays_between_them():
    # written after the word, the code spans would join into one (`c``c`)
    for text in ("`c`<br>`c`\n", "`c d`<br>`c`\n", "`c`<br>`c d` x\n"):
        assert translate_markdown(text, same) == text
        assert _kinds(translate_markdown(text, reverse)) == _kinds(text)


def test_markup_holding_no_words_keeps_the_spacing_around_it():
    for text in ("[ ](u) y\n", "[](u) y\n", "x [ ](u)y\n", "<b> </b> y\n", "a [\n](u) b\n"):
        assert translate_markdown(text, same) == text
    assert translate_markdown("x [ ](u) y\n", reverse) == "y [ ](u) x\n"


def test_emphasis_in_a_fused_word_never_reads_as_other_markup():
    # each falls back to the word's edges: two `*` side by side would read as strong
    cases = {
        "[*a*](u)lm*b*[l](u)\n": "*[*Q*](u)[Q](u)*\n",
        "*a*lm*b*\n": "*_QQ_*\n",
        "*a*lm*b*lm*c*\n": "*_*QQ*_*\n",
    }
    for text, want in cases.items():
        got = translate_markdown(text, fused)
        assert got == want and _kinds(got) == _kinds(text), (text, got)


def test_an_html_link_and_a_link_sharing_glued_words_are_never_one_inside_the_other():
    # a browser ends an <a> at the next, and CommonMark reads a link inside a link as text
    text = '[l m](u)<a href="v">x y</a>[l m](u)w\n'
    for translate in (reverse, fused):
        got = translate_markdown(text, translate)
        assert _depth(got) == 1 and _kinds(got) == _kinds(text), got
    assert translate_markdown(text, same) == text


def test_a_link_the_source_wrote_inside_an_html_link_stays_inside_it():
    # (cut apart, the link would be left no words: `<a href="v">l</a>[](u)`)
    for text in ('<a href="v">[l](u)</a>\n', 'x <a href="v">[l](u)</a>y z\n'):
        assert translate_markdown(text, same) == text
        assert translate_markdown(text, reverse).count('<a href="v">[l](u)</a>') == 1


def test_a_code_span_after_emphasis_in_one_word_takes_its_own_letters():
    # its text is found after the text glued before it (the emphasis's `c`), not at its start
    for text in ("y*b c*`c`\n", "*b c*`c d` x\n"):
        assert translate_markdown(text, same) == text
