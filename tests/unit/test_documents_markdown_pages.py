"""Markdown as real files write it (cases from installed documentation): a model that
returns every sentence as it is must give the file back byte for byte, and nothing may
crash."""

import io

import docx
from fake_translate import reverse, same, upper

from translator.documents.docx import translate_docx
from translator.documents.markdown import translate_markdown


def test_a_line_of_markup_without_words_is_kept():
    for text in ("<https://ci.nodejs.org/>\n", '## <a id="1.95"></a>\n', "Text.\n\n<a@b.c>\n"):
        assert translate_markdown(text, same) == text
        assert translate_markdown(text, reverse) == text  # one word: reversed, the same


def test_code_spans_glued_in_one_word_stay_whole():
    text = "To lint, use\n`make lint`/`vcbuild lint`. It lints files.\n"
    assert translate_markdown(text, same) == text
    assert translate_markdown(text, upper) == (
        "TO LINT, USE\n`make lint`/`vcbuild lint`. IT LINTS FILES.\n"
    )


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


def test_text_glued_after_a_link_around_code_stays_outside_it():
    text = (
        "See [`npm explain`](/commands/npm-explain). Also (see [`config`](/c)), a\n"
        "[`cacache`](http://npm.im/cacache)-based store and **`npm ci`**.\n"
    )
    assert translate_markdown(text, same) == text
    # the glued text is cut off where the translated word still ends with it as it was
    assert translate_markdown(text, upper) == (
        "SEE [`npm explain`](/commands/npm-explain). ALSO (SEE [`config`](/c)), A\n"
        "[`cacache`-BASED](http://npm.im/cacache) STORE AND **`npm ci`**.\n"
    )


def test_sentences_that_come_back_unchanged_keep_their_spacing():
    text = "**Important note:**  If you installed it, make\nsure.  Sybren A.  Stüvel.\n"
    assert translate_markdown(text, same) == text


def test_an_autolink_keeps_the_space_before_it_once():
    text = "Go to <https://a.b/forgot>\nSee <https://a.b/1> for more.\nAt\n<https://r.org> by default.\n"
    assert translate_markdown(text, same) == text
    assert translate_markdown(text, upper) == (
        "GO TO <https://a.b/forgot>\nSEE <https://a.b/1> FOR MORE.\nAT\n<https://r.org> BY DEFAULT.\n"
    )


def test_an_empty_tag_pair_after_a_word_keeps_its_spaces():
    text = 'See [the notes](https://a.b/1) <a id="1.95-notes"></a> Notes here.\n'
    assert translate_markdown(text, same) == text
    assert translate_markdown(text, upper) == (
        'SEE [THE NOTES](https://a.b/1) <a id="1.95-notes"></a> NOTES HERE.\n'
    )


def test_sibling_tags_in_one_word_stay_siblings():
    text = "Press <kbd>Ctrl</kbd>+<kbd>C</kbd> (or **b**_c_) to stop.\n"
    assert translate_markdown(text, same) == text
    assert translate_markdown(text, upper) == (
        "PRESS <kbd>CTRL</kbd>+<kbd>C</kbd> (OR **B**_C_) TO STOP.\n"
    )


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


def test_pairs_around_the_same_word_close_in_reverse_order():
    text = "* **[Installation](#installation)**\n\n_**Warning**_: see [**docs**](./d).\n"
    assert translate_markdown(text, same) == text
    assert translate_markdown(text, upper) == (
        "* **[INSTALLATION](#installation)**\n\n_**WARNING**_: SEE [**DOCS**](./d).\n"
    )
