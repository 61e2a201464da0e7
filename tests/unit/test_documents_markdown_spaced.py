"""Markdown: whitespace next to tags with no words at a pair's inner edges, after a pair
whose closing holds a space, and before emphasis that holds no words, stays as written."""

from fake_translate import reverse, same, upper
from markdown_it import MarkdownIt

from translator.documents.markdown import translate_markdown


def _kinds(text):
    """The inline markup a page shows: each token but text, sorted."""
    tokens = [t for t in MarkdownIt("commonmark").parse(text) if t.type == "inline"]
    return sorted(c.type + (c.content if c.type == "html_inline" else "")
                  for t in tokens for c in t.children if c.type != "text")  # fmt: skip


def _kept(texts):
    for text in texts:
        assert translate_markdown(text, same) == text, text
        for model in (upper, reverse):
            got = translate_markdown(text, model)
            assert _kinds(got) == _kinds(text), (text, model.__name__, got)


def test_tags_apart_at_the_inner_edges_of_a_pair_stay_in_its_markup():
    _kept(["[wb<br>  <br>](u)\n", "**b<span> <br>**[l](u)\n", "[wb<br> ](u)\n",
           "x[<br> <br>wb](u)\n", "x [<br/> <br/> wb](u)\n",
           "[<br/> <br/> w b <br> <br/> ](u)\n"])  # fmt: skip
    # (the spaces between the tags are the separator where a word follows the closing)
    assert translate_markdown("**b<span> <br>**[l](u)\n", reverse) == "[l](u) **b<span> <br>**\n"
    assert translate_markdown("[wb<br>  <br>](u)\n", upper) == "[WB<br>  <br>](u)\n"


def test_lone_tags_after_a_closing_holding_a_space_add_none():
    _kept(["[w ](u)<span><br>\n", "</span>[bb ](u)</span>\n", "[w ](u)<span> <br>\n",
           "<span>** [l](u) </span><br>\n", "**a<span>w </span><br>\n", "[w ](u)<br>x\n"])  # fmt: skip
    assert translate_markdown("[w ](u)<br> x\n", upper) == "[W ](u)<br> X\n"


def test_spaces_before_emphasis_holding_only_a_tag_stay():
    _kept(["b  *<span>*\n", "b</span>  *<span>*\n", "_[  *<span>*\n"])
