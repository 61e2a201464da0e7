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
    # with it as it was ("-based" is not "-BASED")
    "text glued after a link around code stays outside it": (
        "See [`npm explain`](/commands/npm-explain). Also (see [`config`](/c)), a\n"
        "[`cacache`](http://npm.im/cacache)-based store and **`npm ci`**.\n",
        "SEE [`npm explain`](/commands/npm-explain). ALSO (SEE [`config`](/c)), A\n"
        "[`cacache`-BASED](http://npm.im/cacache) STORE AND **`npm ci`**.\n",
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
