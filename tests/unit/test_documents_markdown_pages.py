"""Markdown as real files write it (cases from installed documentation): a model that
returns every sentence as it is must give the file back byte for byte, one that writes it
in capitals must keep the markup where it was, and nothing may crash."""

import io

import docx
import pytest
from fake_translate import reverse, same, upper

from translator.documents.docx import translate_docx
from translator.documents.markdown import translate_markdown

# (source, its translation in capitals)
CASES = {
    "code spans glued in one word stay whole": (
        "To lint, use\n`make lint`/`vcbuild lint`. It lints files.\n",
        "TO LINT, USE\n`make lint`/`vcbuild lint`. IT LINTS FILES.\n",
    ),
    # text glued after markup around code is cut off where the translated word still ends
    # with it, in any case ("-based" and "-BASED")
    "text glued after a link around code stays outside it": (
        "See [`npm explain`](/commands/npm-explain). Also (see [`config`](/c)), a\n"
        "[`cacache`](http://npm.im/cacache)-based store and **`npm ci`**.\n",
        "SEE [`npm explain`](/commands/npm-explain). ALSO (SEE [`config`](/c)), A\n"
        "[`cacache`](http://npm.im/cacache)-BASED STORE AND **`npm ci`**.\n",
    ),
    "an autolink keeps the space before it once": (
        "Go to <https://a.b/forgot>\nSee <https://a.b/1> for more.\nAt\n<https://r.org> by it.\n",
        "GO TO <https://a.b/forgot>\nSEE <https://a.b/1> FOR MORE.\nAT\n<https://r.org> BY IT.\n",
    ),
    "an empty tag pair after a word keeps its spaces": (
        'See [the notes](https://a.b/1) <a id="1.95-notes"></a> Notes here.\n',
        'SEE [THE NOTES](https://a.b/1) <a id="1.95-notes"></a> NOTES HERE.\n',
    ),
    "sibling tags in one word stay siblings": (
        "Press <kbd>Ctrl</kbd>+<kbd>C</kbd> (or **b**_c_) to stop.\n",
        "PRESS <kbd>CTRL</kbd>+<kbd>C</kbd> (OR **B**_C_) TO STOP.\n",
    ),
    "pairs around the same word close in reverse order": (
        "* **[Installation](#installation)**\n\n_**Warning**_: see [**docs**](./d).\n",
        "* **[INSTALLATION](#installation)**\n\n_**WARNING**_: SEE [**DOCS**](./d).\n",
    ),
    "an escaped bracket before a link stays outside it": (
        "* \\[[`b73ff52fe6`](https://x.org/c)] - **deps**: update it.\n",
        "* \\[[`b73ff52fe6`](https://x.org/c)] - **DEPS**: UPDATE IT.\n",
    ),
    "text glued after a link inside strong stays outside the link": (
        "**This project has a [Code of Conduct][].**\n\n[Code of Conduct]: https://x\n",
        "**THIS PROJECT HAS A [CODE OF CONDUCT][].**\n\n[Code of Conduct]: https://x\n",
    ),
    "links around code spans glued in one word each wrap their own": (
        "When `s` is a `Buffer`/[`DataView`][]/[`TypedArray`][]/ value.\n\n[`DataView`]: a\n",
        "WHEN `s` IS A `Buffer`/[`DataView`][]/[`TypedArray`][]/ VALUE.\n\n[`DataView`]: a\n",
    ),
    "a code span is found after the text glued before it": (
        "Every version of Python\u2014`python`, `pip`, and so on.\n",
        "EVERY VERSION OF PYTHON\u2014`python`, `pip`, AND SO ON.\n",
    ),
    "a space inside the edge of code or a link stays there": (
        "If it is `-1 `, or `; `. See [the runtime ](https://x) and [ `lit` here][1].\n",
        "IF IT IS `-1 `, OR `; `. SEE [THE RUNTIME ](https://x) AND [ `lit` HERE][1].\n",
    ),
    "a lone tag keeps the spaces around it": (
        '#### <a name="opts"></a> `opts` for it\n\nThe text has <Message> content.\n',
        '#### <a name="opts"></a> `opts` FOR IT\n\nTHE TEXT HAS <Message> CONTENT.\n',
    ),
    "a backslash line break keeps the space before it": (
        "> git request-pull commit-id \\\n> git://example.org/x.git\n",
        "> GIT REQUEST-PULL COMMIT-ID \\\n> GIT://EXAMPLE.ORG/X.GIT\n",
    ),
    # a word the source has is escaped as there; a new word only where markup could start
    "a character escaped in one place is escaped in that word": (
        'Run it with \\--use-http1. Send it to the client. Then _"\\\\"_ or \\*x\\* x*y.\n',
        'RUN IT WITH --USE-HTTP1. SEND IT TO THE CLIENT. THEN _"\\\\"_ OR \\*X\\* X\\*Y.\n',
    ),
    "a form feed does not end a line": (
        "Some terms.\x0c\n\n### Next heading\n\nMore text.\n",
        "SOME TERMS.\x0c\n\n### NEXT HEADING\n\nMORE TEXT.\n",
    ),
    "entities outside sentences stay entities": (
        "&nbsp;&nbsp;Or on Windows:\n",
        "&nbsp;&nbsp;OR ON WINDOWS:\n",
    ),
}


@pytest.mark.parametrize("case", CASES)
def test_markup_comes_back_where_it_was(case):
    text, capitals = CASES[case]
    assert translate_markdown(text, same) == text
    assert translate_markdown(text, upper) == capitals


def test_a_line_of_markup_without_words_is_kept():
    for text in ("<https://ci.nodejs.org/>\n", '## <a id="1.95"></a>\n', "Text.\n\n<a@b.c>\n"):
        assert translate_markdown(text, same) == text
        assert translate_markdown(text, reverse) == text  # one word: reversed, the same


def test_sentences_that_come_back_unchanged_keep_their_spacing():
    text = "**Important note:**  If you installed it, make\nsure.  Sybren A.  Stüvel.\n"
    assert translate_markdown(text, same) == text


def test_a_tag_or_autolink_inside_a_word_stays_inside_it():
    text = (
        'Use "host = s3.<region>.amazonaws.com" here. Mail the Committee\n'
        "(<tsc@iojs.org>) for **Array<String>**, LGPL-2.1<br>_restrictive_ terms.\n"
    )
    assert translate_markdown(text, same) == text
    got = translate_markdown(text, reverse)  # each word carries what was inside it
    for word in ('s3.<region>.amazonaws.com"', "(<tsc@iojs.org>)", "**Array<String>**,",
                 "LGPL-2.1<br>_restrictive_"):  # fmt: skip
        assert word in got.split(), word


def test_a_lone_tag_at_the_edge_of_emphasis_or_a_link_keeps_the_markup_working():
    """A tag left unclosed is glued as the text outside the markup around it decides, so
    no space is left before a closing `**` (where emphasis would no longer close)."""
    from markdown_it import MarkdownIt

    def shown(text):  # the elements the page shows, tags aside, and its words
        tokens = MarkdownIt().parseInline(text)[0].children
        words = "".join(t.content for t in tokens if t.type in ("text", "html_inline"))
        return [t.type for t in tokens if t.type not in ("text", "html_inline")], sorted(
            words.split()
        )

    for text in ("Say **a <b>** now.\n", "See [Go <b>](u) x.\n"):
        for fake in (same, reverse):
            got = translate_markdown(text, fake)
            assert shown(got) == shown(text), (text, got)


def test_docx_runs_formatted_apart_inside_one_word_do_not_crash():
    d = docx.Document()
    p = d.add_paragraph("Use ")
    p.add_run("make lint").bold = True
    p.add_run("/vcbuild lint").italic = True
    p.add_run(" to lint.")
    out = io.BytesIO()
    d.save(out)
    got = docx.Document(io.BytesIO(translate_docx(out.getvalue(), upper, "en")))
    assert got.paragraphs[0].text == "USE MAKE LINT/VCBUILD LINT TO LINT."
    assert any(r.bold for r in got.paragraphs[0].runs)
    assert any(r.italic for r in got.paragraphs[0].runs)
