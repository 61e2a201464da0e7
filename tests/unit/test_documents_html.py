"""translate_html with fake translators: markup kept exactly, inline tags carried by the
alignment, copied elements untouched, blocks apart, bad HTML one UserError line."""

import re

import pytest
from fake_translate import bracketed, recording, reverse, same, upper
from hypothesis import given, settings
from hypothesis import strategies as st
from util import skeleton

from translator.documents.html import build, translate_html
from translator.documents.html_units import tokens
from translator.errors import UserError


def test_identity_translation_gives_the_document_back_byte_for_byte():
    doc = (
        "<!DOCTYPE html>\n<html lang='de'><head><title>A &amp; B</title>\n"
        '<style>p { color: red }</style></head>\n<body class="x">\n'
        "  <h1 id=top>Ein <em>grosses</em> Haus.</h1>\n"
        '  <p>Hello <b>big <i>red</i></b> world. Second <a href="u?a=1&amp;b=2" '
        "title='t'>sentence</a> here.</p>\n"
        "  <!-- a comment -->\n  <ul><li>one</li><li>two &copy; x</li></ul>\n"
        "  <table><tr><td>cell one</td><td>cell <span class=s>two</span></td></tr></table>\n"
        "</body></html>\n"
    )
    assert translate_html(doc, same, "en") == doc


def test_tags_follow_their_words_when_the_order_changes():
    out = translate_html('<p>the <b>big</b> <a href="#x">red</a> house</p>', reverse, "en")
    assert out == '<p>house <a href="#x">red</a> <b>big</b> the</p>'


def test_nested_tags_stay_nested():
    out = translate_html("<p>one <b>two <i>three</i> four</b> five</p>", reverse, "en")
    assert out == "<p>five <b>four <i>three</i> two</b> one</p>"


def test_markup_nested_deeper_than_prose_is_copied_with_a_warning(caplog):
    """Each tag is read at the same cost whatever the depth (documents/html_stack.py); text
    under more than MAX_NESTING levels of inline markup is left as it is, as in Markdown."""
    from translator.documents.inline import MAX_NESTING

    fits = "<b>" * MAX_NESTING + "two words" + "</b>" * MAX_NESTING
    out = translate_html(f"<p>one {fits} three</p>", upper, "en")
    assert out == f"<p>ONE {fits.replace('two words', 'TWO WORDS')} THREE</p>"
    deep = "<b>" * 3000 + "two words" + "</b>" * 3000
    doc = f"<p>one {deep} three</p><p>four</p>"
    assert translate_html(doc, upper, "en") == f"<p>one {deep} three</p><p>FOUR</p>"
    assert "nests 3000 deep" in caplog.text
    copied = f'<div translate="no">{deep}</div>'
    assert translate_html(copied + "<p>a</p>", upper, "en") == copied + "<p>A</p>"


def test_copied_elements_are_untouched_and_unseen():
    keep = [
        "<pre>  keep\n  <b>this</b>  &amp; </pre>",
        "<script>if (a < b && c) { x = '<p>'; }</script>",
        "<style>b { x: 1 }</style>",
        "<textarea>draft  text</textarea>",
        '<div translate="no">Do  <b>not</b> touch.</div>',
    ]
    inline = ["<code>make  &lt;all&gt;</code>", '<span translate="no">Brand  Name</span>']
    doc = "".join(keep) + f"<p>Run {inline[0]} with {inline[1]} now.</p>"
    translate, seen = recording(reverse)
    out = translate_html(doc, translate, "en")
    assert all(piece in out for piece in keep + inline)
    assert seen == ["Run make <all> with Brand Name now."]  # inline pieces give context
    assert not any(w in " ".join(seen) for w in ("keep", "draft", "touch", "color"))


def test_entities_and_attributes_survive():
    doc = "<p data-x=\"a &quot;q&quot;\" title='b &amp; c'>Fish &amp; chips &copy; now</p>"
    translate, seen = recording(same)
    out = translate_html(doc, translate, "en")
    assert seen == ["b & c", "Fish & chips © now"]  # the model reads text, not entities
    assert out == doc  # an attribute translated to the same text keeps its bytes


def test_text_that_looks_like_markup_is_escaped_back():
    out = translate_html("<p>a &lt;b&gt; c</p>", lambda s: [("x <y> & z", None)], "en")
    assert out == "<p>x &lt;y&gt; &amp; z</p>"


@pytest.mark.parametrize(
    "doc",
    [
        "<p>one two</p><p>three four</p>",
        "<div>one two<div>three four</div></div>",
        "<ul><li>one two<li>three four</ul>",
        "<table><tr><td>one two<td>three four</table>",
        "<p>one two<br>three four</p>",
        "<h1>one two</h1>three four",
        "<blockquote>one two</blockquote><p>three four",
    ],
)
def test_blocks_are_never_one_sentence(doc):
    translate, seen = recording(same)
    assert translate_html(doc, translate, "en") == doc
    assert seen == ["one two", "three four"]


def test_sentences_of_a_paragraph_are_translated_apart():
    translate, seen = recording(same)
    doc = "<p>It rains. <b>The dog sleeps.</b> A cat waits.</p>"
    assert translate_html(doc, translate, "en") == doc
    assert seen == ["It rains.", "The dog sleeps.", "A cat waits."]


def test_a_tag_across_sentences_or_a_break_stays_well_formed():
    for doc in ("<p><b>First one. Second</b> two.</p>", "<div><b>bold<br>a break</b> tail</div>"):
        out = translate_html(doc, reverse, "en")
        assert skeleton(out) == skeleton(doc)


def test_without_alignments_every_tag_is_kept():
    doc = '<p>a <b>b c</b> d <a href="x"><i>e</i></a> f <img src="i.png"> g</p>'
    out = translate_html(doc, lambda s: [("u v w x y z q r", None)] * len(s), "en")
    assert skeleton(out) == skeleton(doc)
    assert re.sub(r"<[^>]+>", "", out).split() == "u v w x y z q r".split()


def test_a_translation_with_fewer_words_keeps_every_tag():
    doc = "<p><b>one</b> <i>two</i> <u>three</u> <s>four</s></p>"
    out = translate_html(doc, lambda s: [("eins", [(0, 0), (3, 0)])], "en")
    assert skeleton(out) == skeleton(doc)


@pytest.mark.parametrize(
    ("doc", "where", "what"),
    [
        ("<p>a <b>b</p>", "line 1, column 10", "</p> while <b> of line 1, column 6 is open"),
        ("<p>a</b> c</p>", "line 1, column 5", "</b> closes no open element"),
        ("<div>\n<b>bold\n</div>", "line 3, column 1", "while <b> of line 2, column 1 is open"),
        ("<p>a <i>open", "line 1, column 6", "<i> is never closed"),
        ("<p>a <b class='x'", "line 1, column 6", "a tag that never ends"),
        ("<p>a <!-- open", "line 1, column 6", "a tag that never ends"),
    ],
)
def test_html_that_does_not_nest_is_mended_with_a_warning_or_refused_when_strict(
    doc, where, what, caplog
):
    with pytest.raises(UserError) as err:
        build(tokens(doc))
    assert where in str(err.value) and what in str(err.value)
    assert "\n" not in str(err.value)
    assert translate_html(doc, same, "en") == doc
    assert f"{where}: " in caplog.text and what in caplog.text


def test_markup_a_browser_mends_is_translated_with_its_tags_where_they_were():
    doc = "<p>Hund <b>Katze</p><p>Ein </i>Mann <i>läuft.</p>"
    assert translate_html(doc, upper, "de") == "<p>HUND <b>KATZE</p><p>EIN </i>MANN <i>LÄUFT.</p>"
    out = translate_html(doc, reverse, "de")
    assert out == "<p><b>Katze Hund</p><p><i>läuft. </i>Mann Ein</p>"  # the stray </i> with Mann


def test_end_tags_html_lets_go_unwritten_are_accepted():
    doc = "<html><body><p>one<p>two<ul><li>three<li>four</ul><dl><dt>five<dd>six</dl>"
    assert translate_html(doc, same, "en") == doc
    translate, seen = recording(same)
    doc = "<p>Intro text<ul><li>item one</li></ul></p><p>after</p>"  # the list ends the p
    assert translate_html(doc, translate, "en") == doc
    assert seen == ["Intro text", "item one", "after"]


@settings(max_examples=150, deadline=None)
@given(
    n=st.integers(0, 9),
    pairs=st.one_of(st.none(), st.lists(st.tuples(st.integers(0, 9), st.integers(0, 9)))),
)
def test_any_translation_and_alignment_keep_every_tag_well_formed(n, pairs):
    doc = (
        '<div><p>a <b>b <i>c</i> d</b> e <a href="x">f</a>. G <span>h <em>i</em></span>'
        ' j<img src="k"> <code>l</code> m.</p><p><b>n<br>o</b> p <u></u>q</p></div>'
    )
    words = " ".join(f"w{k}" for k in range(n))
    out = translate_html(doc, lambda s: [(words, pairs)] * len(s), "en")
    assert skeleton(out) == skeleton(doc)


PIECES = [
    "<p>", "</p>", "<b>", "</b>", "<i>", "</i>", "<a href='x'>", "</a>", "<br>", "<div>",
    "</div>", "<li>", "<ul>", "</ul>", "<code>", "</code>", "<pre>", "</pre>", "<!-- c -->",
    "<img src=x>", "&amp;", "&#169;", " ", "\n", "word", "Two words.", "Satz. Noch einer",
    "<span translate=no>", "</span>", "<script>x<y</script>", "<td>", "<table>", "</table>",
    "<b/>", "</br>", "a&b", "<!DOCTYPE html>", "<", ">",
]  # fmt: skip


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(PIECES), max_size=14), st.booleans())
def test_html_it_accepts_comes_back_with_every_token_and_nesting(pieces, reversing):
    doc = "".join(pieces)
    fn = reverse if reversing else (lambda s: [(" ".join(x.split()[:1]), [(0, 0)]) for x in s])
    out = translate_html(doc, fn, "en")  # markup that does not nest is mended, never refused
    markup = lambda text: sorted(  # noqa: E731
        t.raw for t in tokens(text, strict=False) if t.kind != "text"
    )
    assert markup(out) == markup(doc)
    try:
        build(tokens(doc))
    except UserError:
        return
    build(tokens(out))  # well-formed in, well-formed out


def test_a_sentence_end_inside_copied_code_does_not_split_its_sentence():
    translate, seen = recording(same)
    doc = "<p>Call <code>stop. Then</code> twice. <svg><text>Not. Me</text></svg> Ok.</p>"
    assert translate_html(doc, translate, "en") == doc
    assert seen == ["Call stop. Then twice.", "Ok."]  # (an svg is not prose: never read)


def test_a_paragraph_wrapped_over_lines_keeps_its_lines():
    doc = "<p>\n  The first line of a\n  <b>wrapped</b> paragraph\n  ends here.\n</p>"
    assert translate_html(doc, same, "en") == doc
    out = translate_html(doc, reverse, "en")  # a break follows the words aligned before it
    assert out.startswith("<p>\n  here. ends paragraph <b>wrapped</b> a of line first\n  The")
    assert out.endswith("\n</p>") and skeleton(out) == skeleton(doc)


def test_cells_without_a_letter_keep_their_text_and_markup():
    doc = "<table><tr><td>Eine Frau</td><td><b>42</b> %</td><td>3.5</td></tr></table>"
    translate, seen = recording(reverse)
    out = translate_html(doc, translate, "de")
    assert seen == ["Eine Frau"]
    assert out == "<table><tr><td>Frau Eine</td><td><b>42</b> %</td><td>3.5</td></tr></table>"


def test_attributes_readers_see_are_translated_in_place():
    doc = (
        '<p title="Ein Hund">Zwei Männer</p><p><img src="a b.png" alt=\'Ein Kind\' class="Ein '
        'Hund"> <input placeholder=Suchen aria-label="Tom &amp; Jerry" data-x="Ein Hund"></p>'
        '<p translate="no"><img alt="Ein Kind"></p><pre><img alt="Ein Kind"></pre>'
        '<p><code><abbr title="Ein Hund">x</abbr></code></p><img alt="42" title="">'
    )
    translate, seen = recording(upper)
    out = translate_html(doc, translate, "de")
    assert seen[:4] == ["Ein Hund", "Ein Kind", "Suchen", "Tom & Jerry"]  # one call, in order
    assert out == (
        '<p title="EIN HUND">ZWEI MÄNNER</p><p><img src="a b.png" alt=\'EIN KIND\' class="Ein '
        'Hund"> <input placeholder="SUCHEN" aria-label="TOM &amp; JERRY" data-x="Ein Hund"></p>'
        '<p translate="no"><img alt="Ein Kind"></p><pre><img alt="Ein Kind"></pre>'
        '<p><code><abbr title="Ein Hund">x</abbr></code></p><img alt="42" title="">'
    )


def test_a_translated_attribute_value_is_escaped_for_its_quotes():
    def quoting(sentences):
        return [("Er sagt \"ja\" & 'nein'", None) for _ in sentences]

    out = translate_html("<img alt=\"a\"><img alt='b'><img alt=c>", quoting, "de")
    assert out == (
        "<img alt=\"Er sagt &quot;ja&quot; &amp; 'nein'\">"
        "<img alt='Er sagt \"ja\" &amp; &#39;nein&#39;'>"
        "<img alt=\"Er sagt &quot;ja&quot; &amp; 'nein'\">"
    )
    assert [t.attrs for t in tokens(out)][0] == [("alt", "Er sagt \"ja\" & 'nein'")]


@pytest.mark.parametrize(
    "doc, reversed_",
    [
        ('<p>Klick <a href="x">hier</a>.</p>', '<p><a href="x">hier</a>. Klick</p>'),
        ("<p>Ein <i><b>Hund</b></i>, oder?</p>", "<p>oder? <i><b>Hund</b></i>, Ein</p>"),
        ("<p>„<i>Hund</i>“ (<b>Katze</b>)</p>", "<p>(<b>Katze</b>) „<i>Hund</i>“</p>"),
        ("<p>Ein <b>(Hund)</b></p>", "<p><b>(Hund)</b> Ein</p>"),  # inside the tag: inside
    ],
)
def test_punctuation_glued_to_a_tagged_word_stays_outside_the_tag(doc, reversed_):
    assert translate_html(doc, same, "de") == doc
    assert translate_html(doc, reverse, "de") == reversed_


@pytest.mark.parametrize(
    "doc, bracketed_",
    [
        ("<p>Ein <b>Hund</b></p>", "<p>(Ein). (<b>Hund</b>).</p>"),
        ("<p><i><b>Hund</b></i> x</p>", "<p>(<i><b>Hund</b></i>). (x).</p>"),
        ("<p>Ein <b>Hund.</b></p>", "<p>(Ein). (<b>Hund).</b></p>"),  # "." inside: stays
        ("<p>x <b>„Hund</b></p>", "<p>(x). <b>(Hund</b>).</p>"),  # "„" inside, "d" at the end
        ("<p><b>Hund</b></p>", "<p><b>(Hund).</b></p>"),  # around the sentence: all of it
    ],
)
def test_a_translated_words_own_punctuation_stays_outside_a_tag_that_had_none(doc, bracketed_):
    """A tag whose source starts or ends at a letter wraps its translated word's letters,
    not the punctuation the translation put around them."""
    assert translate_html(doc, bracketed, "de") == bracketed_


PAGE_SNIPPETS = [
    # a line break inside a link is a space, not a sentence end
    '<p>See the <a href="x">“Defining Shared Behavior with\nTraits”</a> section. Now go.</p>',
    # code glued to punctuation, inside and outside a link
    "<p>Run (<code>cargo test</code>): see <a href=x><code>qemu</code></a>.</p>",
    # two pieces of code in one word, and the words after them
    "<p>except for <code>-F</code>/<code>--forbid</code>, which cannot be overridden.</p>",
    # comments and empty elements glued to words, before and after the sentences
    "<p>Publish on <a href=x>crates.io</a><!-- ignore -->. More <a id=y></a>here.</p>",
    '<div><a href="#m">Skip to main</a><!--[if IE]>old<![endif]--><x-b><h2>T</h2></x-b></div>',
    "<p>Zwei Männer <img src=a.png></p><p><img src=a.png>Bild ist da.</p>",
    # sibling elements in one word, several word breaks in one word
    '<h2><a href="c">core</a><span class="version">1.97.0-nightly</span></h2>',
    '<h2><a href="i">In core::<wbr>arch::<wbr>x86_<wbr>64</a></h2>',
    # text glued before a tag, a path that is not two sentences, spaces of copied words
    "<p>The targets will<sup><a href=#f>1</a></sup> be in $HOME/.<em>cargo</em>/bin. Yes.</p>",
    "<h1>Function <span>min</span>&nbsp;<button>Copy\titem</button></h1>",
    # code glued to code over several words, code and elements ending in a space
    "<li><code>#[doc(cfg)]</code>/<code>#[doc(cfg = true)]</code>/<code>#[doc(x)]</code></li>",
    "<p>Lines that start with <code># </code>, hidden, or <code>; </code> alone.</p>",
    '<h3><a name="X">Macro </a>EXSLT_CALL</h3><p>the <a href="x">archives </a>and more</p>',
]


def test_glued_code_spaces_and_text_before_a_tag_keep_their_places_in_a_translation():
    doc = (
        "<p>Use <code>a</code>/<code>b c</code> or <code># </code>, then "
        '<a name="X">Macro </a>X.</p><h2><span>1. </span>Copyright<a href="#c">x</a></h2>'
    )
    assert translate_html(doc, upper, "en") == (
        "<p>USE <code>a</code>/<code>b c</code> OR <code># </code>, THEN "
        '<a name="X">MACRO </a>X.</p><h2><span>1. </span>COPYRIGHT<a href="#c">X</a></h2>'
    )


@pytest.mark.parametrize("doc", PAGE_SNIPPETS)
def test_pages_come_back_byte_for_byte_through_an_identity_model(doc):
    assert translate_html(doc, same, "en") == doc


@pytest.mark.parametrize("doc", PAGE_SNIPPETS)
def test_pages_keep_every_word_and_tag_through_a_reordering_model(doc):
    out = translate_html(doc, reverse, "en")
    assert skeleton(out) == skeleton(doc)
    text = [sorted(re.sub(r"<[^>]*>|\s|&nbsp;", "", t)) for t in (out, doc)]
    assert text[0] == text[1]


def test_a_sign_the_page_wrote_as_an_entity_is_written_plainly_a_letter_sign_as_written():
    doc = "<p>Version 0&#46;12 &copy; 2024.</p><p>Policy 0.12.0.0 documentation ©</p>"
    assert translate_html(doc, upper, "en") == (
        "<p>VERSION 0.12 &copy; 2024.</p><p>POLICY 0.12.0.0 DOCUMENTATION &copy;</p>"
    )


def test_an_empty_element_at_the_end_of_another_stays_inside_it_once():
    for doc in ["<p><b>a</b><b>b<i></i></b></p>", "<p>Ein <b>Hund<i></i></b></p>"]:
        assert translate_html(doc, same, "de") == doc
    out = translate_html("<p>Ein <a href=x>Hund<span class=i></span></a> hier.</p>", reverse, "de")
    assert out == "<p>hier. <a href=x>Hund<span class=i></span></a> Ein</p>"


def test_reference_marks_are_copied_whole_and_never_reach_the_model():
    seen = []

    def model(sentences):
        seen.extend(sentences)
        return upper(sentences)

    page = ('<p>Ein Mann fährt Rad.<sup><a href="#fn1">[1]</a></sup> Zwei Hunde'
            '<sup>2</sup> spielen<a href="#n">*</a>.</p>')  # fmt: skip
    assert translate_html(page, model, "de") == (
        '<p>EIN MANN FÄHRT RAD.<sup><a href="#fn1">[1]</a></sup> ZWEI HUNDE'
        '<sup>2</sup> SPIELEN<a href="#n">*</a>.</p>'
    )
    assert seen == ["Ein Mann fährt Rad.", "Zwei Hunde spielen."]


@pytest.mark.parametrize("page", [
    "<p><b>2024</b> war gut.</p>",  # a number outside sup: a word of the sentence
    "<p>Das <i>[sic]</i> ist so.</p>",  # letters in brackets
    "<p>Ein <b>Hund</b>.</p>",
])  # fmt: skip
def test_inline_text_that_is_no_reference_mark_is_translated(page):
    seen = []

    def model(sentences):
        seen.extend(sentences)
        return upper(sentences)

    translate_html(page, model, "de")
    assert seen == [re.sub("<[^>]+>", "", page)]
