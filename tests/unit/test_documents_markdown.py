"""Markdown: the prose translated, its markup and everything else kept byte for byte."""

import re
from pathlib import Path

from fake_translate import bracketed, recording, reverse

from translator.documents.markdown import front_matter_lines, translate_markdown
from translator.documents.markdown_inline import read_inline

DOC = """---
title: keep me
---

# A *small* title

> A **bold [link](http://a.b "t") text** and `code` here\\*s &amp; <b>x y</b>
> second line{HARD}
> last ![alt text](i.png) <http://x.y> end.

- item one. Item *two*
  continued
1. num __strong__

| head a | head b |
|---|---|
| cell *d* | e |

```python
code = "kept"
```

<div>html block</div>

Setext head
===========

[ref]: http://example.com
Text with [ref link][ref] and ~~strike~~.
""".replace("{HARD}", "  ")  # a hard line break: two spaces ending the line


def identity(sentences):
    return [(s, [(i, i) for i in range(len(s.split()))]) for s in sentences]


def upper(sentences):
    return [(s.upper(), [(i, i) for i in range(len(s.split()))]) for s in sentences]


def test_identity_gives_the_document_back_byte_for_byte():
    assert translate_markdown(DOC, identity, "en") == DOC


def test_text_translated_and_markup_code_urls_front_matter_kept():
    out = translate_markdown(DOC, upper, "en")
    assert out.startswith("---\ntitle: keep me\n---\n\n# A *SMALL* TITLE\n")
    assert '> A **BOLD [LINK](http://a.b "t") TEXT** AND `code` HERE\\*S &amp; <b>X Y</b>' in out
    assert "> SECOND LINE  \n> LAST ![alt text](i.png) <http://x.y> END.\n" in out
    assert "- ITEM ONE. ITEM *TWO*\n  CONTINUED\n1. NUM __STRONG__\n" in out
    assert "| HEAD A | HEAD B |\n|---|---|\n| CELL *D* | E |\n" in out
    assert '```python\ncode = "kept"\n```\n\n<div>html block</div>\n' in out
    assert "SETEXT HEAD\n===========\n\n[ref]: http://example.com\n" in out
    assert out.endswith("TEXT WITH [REF LINK][ref] AND ~~STRIKE~~.\n")


def test_markup_follows_the_aligned_words():
    out = translate_markdown("Two *small* dogs and a [red](http://r) ball.\n", reverse, "en")
    assert out == "ball. [red](http://r) a and dogs *small* Two\n"


def test_batched_in_one_call_for_a_short_document():
    calls = []

    def model(sentences):
        calls.append(sentences)
        return upper(sentences)

    translate_markdown(DOC, model, "en")
    assert len(calls) == 1 and "Setext head" in calls[0] and "Item two continued" in calls[0]
    assert not any("code" == s or "kept" in s for s in calls[0])


def test_emphasis_across_sentences_translated_as_one_unit():
    calls = []

    def model(sentences):
        calls.append(sentences)
        return upper(sentences)

    out = translate_markdown("One dog. *Two cats. Three* birds. Four.\n", model, "en")
    assert calls == [["One dog.", "Two cats. Three birds.", "Four."]]
    assert out == "ONE DOG. *TWO CATS. THREE* BIRDS. FOUR.\n"


def test_without_alignment_every_piece_of_markup_survives():
    out = translate_markdown(DOC, lambda ss: [(s.upper() + " X", None) for s in ss], "en")
    for piece in ["**", "[", '](http://a.b "t")', "`code`", "<b>", "</b>", "~~", "__"]:
        assert out.count(piece) == DOC.count(piece), piece


def test_front_matter_and_unreadable_inline():
    assert front_matter_lines(["---\n", "a: 1\n", "---\n", "text\n"]) == 3
    assert front_matter_lines(["---\n", "a: 1\n"]) == 0
    assert front_matter_lines(["text\n"]) == 0
    assert read_inline("abc", []) is None  # tokens that do not account for the text


def test_a_translation_shorter_than_its_lines_removes_the_lines_left():
    one_word = lambda ss: [("X", None) for _ in ss]  # noqa: E731
    out = translate_markdown("- a b\n  c d.\n- e\n\n> f\n> g\n", one_word, "en")
    assert out == "- X\n- X\n\n> X\n"


def test_lone_and_crossed_inline_html_tags_stay_in_place():
    text = "A <span>red dog<br> and *a <i>cat* here.\n\nOne <b>two</b> <u>three.\n"
    assert translate_markdown(text, identity, "en") == text
    out = translate_markdown(text, upper, "en")
    assert out == "A <span>RED DOG<br> AND *A <i>CAT* HERE.\n\nONE <b>TWO</b> <u>THREE.\n"


def test_text_glued_to_markup_stays_outside_it():
    text = (
        "Files (`.html`/`.htm`), (**bold**), *it*; see `a|b`.\n\n| `x\\|y` | a \\| b |\n|---|---|\n"
    )
    assert translate_markdown(text, identity, "en") == text
    out = translate_markdown(text, upper, "en")
    assert (
        out
        == "FILES (`.html`/`.htm`), (**BOLD**), *IT*; SEE `a|b`.\n\n| `x\\|y` | A \\| B |\n|---|---|\n"
    )


def test_a_code_span_the_model_rewrote_keeps_its_source_glue():
    out = translate_markdown("Run (`make`).\n", lambda ss: [("Lauf (mach).", None) for _ in ss])
    assert out == "Lauf (`make`).\n"


def test_the_projects_own_markdown_comes_back_through_an_identity_model(caplog):
    root = Path(__file__).resolve().parents[2]
    spaces = re.compile(r"(?<=\S)[ \t]{2,}(?=\S)")  # the model's single space inside a sentence
    # tables with escaped pipes, code spans glued to text, nested lists, HTML
    for path in [root / "README.md", root / "docs/configuration.md", root / "docs/documents.md"]:
        text = path.read_text(encoding="utf-8")
        out = translate_markdown(text, identity, "en")
        assert spaces.sub(" ", out) == spaces.sub(" ", text), path.name
    assert "left untranslated" not in caplog.text


def test_table_cells_and_items_without_a_letter_are_left_as_they_are():
    doc = "| Name | Alter |\n| --- | ---: |\n| Eine Frau | **42** |\n\n* 3.5\n* Ein Hund\n"
    translate, seen = recording(reverse)
    out = translate_markdown(doc, translate, "de")
    assert sorted(seen) == ["Alter", "Ein Hund", "Eine Frau", "Name"]
    assert out == "| Name | Alter |\n| --- | ---: |\n| Frau Eine | **42** |\n\n* 3.5\n* Hund Ein\n"


def test_a_sentence_whose_letters_are_all_code_is_left_as_it_is():
    """Code stays as written, so a sentence of code and numbers (`make test`, `x` 42) has
    nothing for a model to translate, which could only add words around it."""
    doc = "`code` 42\n\n* `make test`\n* Ein `Hund`\n\n![Bild](a.png) und `x`\n"
    translate, seen = recording(reverse)
    out = translate_markdown(doc, translate, "de")
    assert sorted(seen) == ["Bild und x", "Ein Hund"]
    assert out.startswith("`code` 42\n\n* `make test`\n* `Hund` Ein\n")


def test_markup_nested_too_deep_is_left_as_it_is_and_the_rest_translated(caplog):
    deep = "*" * 2000 + "Hund" + "*" * 2000
    out = translate_markdown(f"Ein Hund.\n\n{deep}\n\n*Eine* Katze.\n", reverse, "de")
    assert out == f"Hund. Ein\n\n{deep}\n\nKatze. *Eine*\n"
    assert "line 3: Markdown inline left untranslated (markup nested 1000 deep)" in caplog.text
    crossed = "**- x**<y>["  # a lone tag inside the word emphasis closes in: spans cross
    out = translate_markdown(f"Ein Hund.\n\n{crossed}\n", reverse, "de")
    assert out == f"Hund. Ein\n\n{crossed}\n" and "line 3: Markdown inline left" in caplog.text


def test_extension_pieces_are_kept_and_never_reach_the_model():
    seen = []

    def model(sentences):
        seen.extend(sentences)
        return [(s.upper(), [(i, i) for i in range(len(s.split()))]) for s in sentences]

    doc = ("## Ein Mann fährt {#fahrrad}\n\n- [ ] Ein Hund.\n- [x] Zwei Hunde.\n\n"
           "Ein Kind schläft.[^1] Eine Frau liest.\n\n{% include note.html %}\n\n"
           "[^1]: Ein Hund läuft.\n")  # fmt: skip
    assert translate_markdown(doc, model, "de") == (
        "## EIN MANN FÄHRT {#fahrrad}\n\n- [ ] EIN HUND.\n- [x] ZWEI HUNDE.\n\n"
        "EIN KIND SCHLÄFT.[^1] EINE FRAU LIEST.\n\n{% include note.html %}\n\n"
        "[^1]: EIN HUND LÄUFT.\n"
    )
    assert not [s for s in seen if re.search(r"[\[{]", s)], seen


def test_pieces_with_no_words_side_by_side_are_glued_as_one():
    def upper(sentences):
        return [(s.upper(), [(i, i) for i in range(len(s.split()))]) for s in sentences]

    doc = 'Ein `x` <span class="e"></span>[^1] Hund läuft.\n'
    assert (
        translate_markdown(doc, upper, "de") == 'EIN `x` <span class="e"></span>[^1] HUND LÄUFT.\n'
    )


def test_math_admonitions_and_definition_lists():
    """$ math stays as written (a block, and inline math following its words), prices are
    prose; an admonition's body and quoted title, and a definition, are translated, the
    kind and the markers kept."""
    doc = ("!!! note \"Ein Titel\"\n    Der Hund läuft.\n\n!!! warning\n    Achtung hier.\n\n"
           "$$\na = b + c\n$$\n\nSei $x^2$ groß.\n\nEs kostet $5 und $10.\n\n"
           "Apfel\n:   Eine Frucht.\n")  # fmt: skip
    assert translate_markdown(doc, reverse, "de") == (
        "!!! note \"Titel Ein\"\n    läuft. Hund Der\n\n!!! warning\n    hier. Achtung\n\n"
        "$$\na = b + c\n$$\n\ngroß. $x^2$ Sei\n\n$10. und $5 kostet Es\n\n"
        "Apfel\n:   Frucht. Eine\n"
    )  # fmt: skip
    assert translate_markdown(doc, identity, "de") == doc


def test_myst_directives_and_pandoc_divs():
    """A MyST directive that holds prose has its body (and its title, where the argument
    is one) translated and its name and options kept; a code directive is kept whole; a
    pandoc div's body is prose."""
    doc = (":::{note}\n:class: tip\nDer Hund läuft.\n:::\n\n"
           "```{admonition} Ein Titel\n---\nclass: tip\n---\nDie Katze schläft.\n```\n\n"
           "::::{tab-set}\n:::{tab-item} Erste Seite\nEin Text.\n:::\n::::\n\n"
           "```{code-block} python\nx = \"so bleibt\"\n```\n\n"
           "- Punkt\n\n  :::{tip} Kein Titel\n  Ein Tipp.\n  :::\n\n"
           "::: {.warning}\nEin Div.\n:::\n")  # fmt: skip
    assert translate_markdown(doc, reverse, "de") == (
        ":::{note}\n:class: tip\nläuft. Hund Der\n:::\n\n"
        "```{admonition} Titel Ein\n---\nclass: tip\n---\nschläft. Katze Die\n```\n\n"
        "::::{tab-set}\n:::{tab-item} Seite Erste\nText. Ein\n:::\n::::\n\n"
        "```{code-block} python\nx = \"so bleibt\"\n```\n\n"
        "- Punkt\n\n  :::{tip} Kein Titel\n  Tipp. Ein\n  :::\n\n"
        "::: {.warning}\nDiv. Ein\n:::\n"
    )  # fmt: skip
    assert translate_markdown(doc, identity, "de") == doc


def test_a_translated_words_own_punctuation_stays_outside_emphasis_that_had_none():
    out = translate_markdown("Ein *Hund* und **„Katze“** und _Maus._\n", bracketed, "de")
    assert out == "(Ein). (*Hund*). (und). **(Katze).** (und). (_Maus)._\n"


def test_emphasis_left_without_a_word_is_dropped_and_a_link_kept():
    """Three spans over a two-word translation: one of them gets no word. Bare delimiters
    would show as text (`****A`) or, alone on a line, as a rule (`___`); a link keeps its
    target."""
    src = "Ein **Mann** mit *einem* [Hund](http://x.de) läuft.\n"

    def two_words(sentences):
        return [("A runs.", [(0, 0), (5, 1)]) for _ in sentences]

    out = translate_markdown(src, two_words, "en")
    assert out.count("*") in (0, 2) and "**" not in out, out
    assert "](http://x.de)" in out and out.endswith(".\n"), out
    assert translate_markdown("__Mann__\n", lambda s: [("", [])] * len(s), "en") == "\n"


def test_a_nul_is_read_as_commonmark_reads_it_and_its_paragraph_translated():
    got = translate_markdown("Ein Hund\0 Ende.\n\nZwei *Hunde*.\n", upper)
    assert got == "EIN HUND\ufffd ENDE.\n\nZWEI *HUNDE*.\n"


def test_taking_text_out_moves_spans_and_open_markup_as_a_rebuilt_text_would():
    """The reader takes whitespace out of its plain text, at its end (cheaply) or inside
    it; either way its text, forms, spans and open markup are those of a text rebuilt."""
    import random

    from translator.documents.markdown_inline import _Reader
    from translator.documents.markdown_marks import Mark

    rng = random.Random(7)
    for _ in range(200):
        reader = _Reader("")
        pieces = ["".join(rng.choice("ab ") for _ in range(rng.randint(0, 4))) for _ in range(6)]
        for piece in pieces:
            at = reader.size
            reader.add(piece)
            reader._span(at, reader.size, Mark("pair", "*", "*"))
            reader.stack.append(("em", "*", reader.size, 0, 0))
        text, forms = "".join(pieces), list("".join(pieces))
        spans = [(a, b) for a, b, _ in reader.spans]
        marks = [e[2] for e in reader.stack]
        for _ in range(3):
            if not text:
                break
            at = rng.choice([rng.randrange(len(text)), len(text) - 1])
            n = rng.randint(1, len(text) - at)
            reader._drop(at, n)
            text, forms = text[:at] + text[at + n :], forms[:at] + forms[at + n :]

            def moved(p, at=at, n=n):
                return p - min(n, max(0, p - at))

            spans = [(moved(a), moved(b)) for a, b in spans]
            marks = [moved(p) for p in marks]
            assert "".join(reader.plain) == text and reader.size == len(text)
            assert reader.forms == forms
            assert [(a, b) for a, b, _ in reader.spans] == spans
            assert [e[2] for e in reader.stack] == marks


def test_tags_left_open_are_settled_as_demoting_them_one_at_a_time_would(monkeypatch):
    """Tags no markup closed are demoted together and the text rebuilt once; random
    paragraphs of words, spaces, emphasis and open tags read as demoting each in turn reads
    them (text, spans and forms alike)."""
    import random

    from translator.documents import markdown_inline
    from translator.documents.markdown import _parser

    def one_at_a_time(reader, first, closing=None):
        while len(reader.stack) > first:
            reader.demote(closing, first)

    rng = random.Random(3)
    pieces = ["w", "ab", " ", "  ", "<br>", "<span>", "</span>", "*a*", "<b>", " x.", "<x@y.z>"]
    for _ in range(300):
        src = "".join(rng.choice(pieces) for _ in range(rng.randint(1, 14))).strip() or "w"
        children = _parser().parseInline(src)[0].children
        settled = read_inline(src, children)
        with monkeypatch.context() as patched:
            patched.setattr(markdown_inline._Reader, "demote_all", one_at_a_time)
            assert read_inline(src, children) == settled, src


def test_tags_left_open_keep_their_order_and_spacing():
    for text in [
        '<img src="a.png"> A caption here.\n',
        "<b> <i> a dog.\n",
        "A dog <b> <i> runs.\n",
        "A dog <br>  <br>\n",
        "A dog  <b><span><br>\n",
        "<br> </b> Two dogs.\n",  # (an opening left open, a closing that closes nothing)
        "<br> <br/> red\n",
        "A man <i><br/>\n",
        "</span><i>`c d`\n",
        "[Home](/)<br>[About](/about)\n",  # (a piece glued after a closing stays after it)
        "A <i>dog</i><br>runs.\n",
    ]:
        assert translate_markdown(text, identity, "en") == text
    assert translate_markdown("<br> <b> a dog.\n", upper, "en") == "<br> <b> A DOG.\n"


def test_tags_between_other_markup_with_no_word_beside_them_are_all_kept():
    text = "A <i>dog</i>   <x@y.z><span><br><x@y.z>\n"
    out = translate_markdown(text, upper, "en")
    assert out.startswith("A <i>DOG</i>") and sorted(re.findall("<[^>]+>", out)) == sorted(
        re.findall("<[^>]+>", text)
    )


def test_a_shortcut_or_collapsed_reference_link_keeps_finding_its_definition():
    text = "A [Hund][] sees [the  Katze] and [Vogel][v].\n\n[hund]: /h\n[The Katze]: /k\n[v]: /v\n"
    assert translate_markdown(text, identity, "en") == text
    assert translate_markdown(text, upper, "en") == (  # (labels match blind to case)
        "A [HUND][] SEES [THE KATZE] AND [VOGEL][v].\n\n[hund]: /h\n[The Katze]: /k\n[v]: /v\n"
    )
    from translator.documents.markdown import _parser

    def links(markdown):
        inline = _parser().parse(markdown)[1]
        return [t.attrs["href"] for t in inline.children if t.type == "link_open"]

    out = translate_markdown(text, bracketed, "en")  # (every word rewritten)
    assert "[the  Katze]" in out and links(out) == links(text) == ["/h", "/k", "/v"]
