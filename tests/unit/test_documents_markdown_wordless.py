"""Markdown markup holding no words: tag pairs around lone pieces, pieces before the
first word."""

from fake_translate import reverse, upper
from markdown_it import MarkdownIt

from translator.documents.markdown import translate_markdown


def _kinds(text):
    md = MarkdownIt("commonmark").enable(["table", "strikethrough"])
    out = []
    for tok in md.parse(text):
        children = tok.children if tok.type == "inline" else [tok]
        out += [c.type + (c.content if c.type == "html_inline" else "") for c in children
                if c.type not in ("text", "softbreak", "hardbreak")]  # fmt: skip
    return out


def test_a_tag_pair_around_lone_pieces_writes_them_once():
    # the pair is glued as one lone piece whose raw holds those inside it
    cases = {
        "<span>![](i.png)</span>w\n": "<span>![](i.png)</span>W\n",
        "> <br>  *a b*<div><!-- c --></div>\n": "> <br>  *A B*<div><!-- c --></div>\n",
        "- <x@y.z><div> y</div>ab.<div> <span></div>\n":
            "- <x@y.z><div> Y</div>AB.<div> <span></div>\n",
        "a <div><br></div> b\n": "A <div><br></div> B\n",
    }  # fmt: skip
    for text, want in cases.items():
        assert translate_markdown(text, upper) == want
        assert sorted(_kinds(translate_markdown(text, reverse))) == sorted(_kinds(text)), text


def _links_deep(text):
    """How deep links (Markdown's and HTML <a>) go inside one another in `text`."""
    md, worst = MarkdownIt("commonmark"), 0
    for tok in md.parse(text):
        depth = 0
        for c in tok.children or []:
            depth += c.type == "link_open" or c.content.startswith("<a ")
            depth -= c.type == "link_close" or c.content.startswith("</a")
            worst = max(worst, depth)
    return worst


def test_an_html_link_glued_to_a_markdown_link_is_never_written_inside_it():
    # an <a> inside a link (or inside an <a>) is not a link a browser keeps
    for text in ("[l m](u)<a href=\"v\">x</a>\n", "[l](u)<a href=\"v\">x y</a>\n",
                 "a <a href=\"v\">b c</a>[d](u) e\n", "<a href=\"v\">b c</a><a href=\"w\">d</a> e\n"):  # fmt: skip
        got = translate_markdown(text, reverse)
        assert _links_deep(got) == 1 and sorted(_kinds(got)) == sorted(_kinds(text)), got


def test_emphasis_holding_no_words_is_kept_as_written():
    # its delimiters around a tag alone are a piece with no words, not markup to drop
    cases = {"**<span>******\n": "**<span>******\n", "a **<br>** b\n": "A **<br>** B\n",
             "`c`****<span><span>****\n": "`c`****<span><span>****\n"}  # fmt: skip
    for text, want in cases.items():
        assert translate_markdown(text, upper) == want
        assert sorted(_kinds(translate_markdown(text, reverse))) == sorted(_kinds(text)), text
