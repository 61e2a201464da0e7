"""Markdown: a code span whose edge shows a space, touching a word outside it, holds the
separator between them (as a pair's markup does): reordered words neither lose nor repeat
text."""

from collections import Counter

from fake_translate import reverse, same

from translator.documents.markdown import translate_markdown


def _letters(text: str) -> Counter:
    return Counter(text.replace(" ", "").replace("\n", ""))


def test_a_code_span_opening_on_a_space_right_after_emphasis_keeps_its_words():
    text = "Aa *bb cc*` dd ee`\n"
    assert translate_markdown(text, same) == text
    assert translate_markdown(text, reverse) == "` dd ee` *cc bb* Aa\n"


def test_a_code_span_with_a_space_at_an_edge_touching_a_word_keeps_every_letter():
    for text in ("Aa *bb cc*` dd ee`ff\n", "x` a`\n", "a`  b  `c\n", "a`b `c d\n",
                 "Red. Here *tree*` red dog!`\n", "[a b](u)` c d`\n"):  # fmt: skip
        assert translate_markdown(text, same) == text, text
        got = translate_markdown(text, reverse)
        assert _letters(got) == _letters(text), (text, got)


def test_a_code_span_sharing_a_word_with_emphasis_is_not_written_twice_when_it_moves():
    text = "Aa *bb cc*`dd ee`\n"
    assert translate_markdown(text, same) == text
    assert translate_markdown(text, reverse) == "`dd ee` *cc bb* Aa\n"
    for text in ("<span>`A. `Red big.</span>`<span> </span>Runs.`\n",
                 "Dog! A tree the<span> a? Big</span>` red <span>the</span> `cat.\n"):  # fmt: skip
        assert translate_markdown(text, same) == text, text
        got = translate_markdown(text, reverse)
        assert _letters(got) == _letters(text), (text, got)
