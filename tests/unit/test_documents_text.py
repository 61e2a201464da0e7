"""Plain text documents: sentences found and translated in batches, everything between
them kept byte for byte, line breaks inside a sentence put back; the dispatch by format;
the resumable journal."""

import json
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from translator.documents import format_of, translate_bytes
from translator.documents.journal import journal_path, translate_document
from translator.documents.segment import rules_language, sentence_spans, split_sentences
from translator.documents.text import translate_text
from translator.errors import UserError


def upper(sentences):
    """A fake model: each word uppercased, word i aligned to word i."""
    return [(s.upper(), [(i, i) for i in range(len(s.split()))]) for s in sentences]


def reverse(sentences):
    """A fake model that reverses the words, aligned accordingly."""
    out = []
    for s in sentences:
        words = s.split()
        n = len(words)
        out.append((" ".join(reversed(words)), [(i, n - 1 - i) for i in range(n)]))
    return out


def test_sentences_are_split_with_the_whitespace_between_left_out():
    text = "  Ein Mann fährt Rad, z.B. am 3. Mai.  Zwei Hunde spielen! Und dann?\n"
    spans = sentence_spans(text, "de")
    assert [text[a:b] for a, b in spans] == [
        "Ein Mann fährt Rad, z.B. am 3. Mai.",
        "Zwei Hunde spielen!",
        "Und dann?",
    ]
    assert split_sentences("", "de") == [] and split_sentences(" \n ", "de") == []


def test_a_capitalised_german_article_starts_a_sentence_where_no_stop_ends_one():
    text = "Zwei Männer in einer Stadt Der Mann hebt seine Arme. Er rasiert seinen Bart. Zwei"
    text += " Hunde mit der Nummer 10. Ein Mann spielt Ein-Mann-Orchester: Die Zeit liegt da."
    assert split_sentences(text, "de") == [
        "Zwei Männer in einer Stadt",
        "Der Mann hebt seine Arme.",
        "Er rasiert seinen Bart.",  # pysbd alone lists "Bart." as an abbreviation
        "Zwei Hunde mit der Nummer 10.",  # and reads "10." as an ordinal
        "Ein Mann spielt Ein-Mann-Orchester: Die Zeit liegt da.",
    ]
    # English names take "The": no such rule there
    assert split_sentences("He reads The Da Vinci Code", "en") == ["He reads The Da Vinci Code"]


@pytest.mark.parametrize("text, lang, want", [
    ("Er sagte: „Ich komme.“ Dann ging er.", "de", ["Er sagte: „Ich komme.“", "Dann ging er."]),
    ("Er rief: »Halt!« Sie lief.", "de", ["Er rief: »Halt!«", "Sie lief."]),
    ('Er sagte: "Gut." Dann ging er.', "de", ['Er sagte: "Gut."', "Dann ging er."]),
    ("Er kam.[2][3] Dann ging er.", "de", ["Er kam.[2][3]", "Dann ging er."]),
    ("It rains.[^1] Then it snows.", "en", ["It rains.[^1]", "Then it snows."]),
    ("Il dit : « Je viens. » Puis il part.", "fr", ["Il dit : « Je viens. »", "Puis il part."]),
    ("Er sagte „Hallo.“ und ging.", "de", ["Er sagte „Hallo.“ und ging."]),  # no capital
])  # fmt: skip
def test_a_sentence_ends_after_closing_quotes_and_footnote_marks(text, lang, want):
    assert split_sentences(text, lang) == want


def test_a_long_paragraph_is_split_a_window_at_a_time_as_it_would_be_whole(monkeypatch):
    """pysbd sees at most WINDOW characters at once (its time grows faster than the text),
    and the windows' borders add or lose no sentence: abbreviations and ordinals that
    straddle one stay whole."""
    import pysbd.processor

    from translator.documents import segment

    alone = [
        "Ein Mann fährt Rad, z.B. am 3. Mai.",
        "Dr. Müller wohnt in der Str. Nr. 5 in Berlin.",
        "Zwei Hunde spielen im Park!",
        "Was macht die Frau mit dem Buch?",
    ]
    sentences = [alone[i % 4] for i in range(301)]
    text = " ".join(sentences)
    seen = []
    process = pysbd.processor.Processor.process

    def watched(self):
        seen.append(len(self.text))
        return process(self)

    monkeypatch.setattr(pysbd.processor.Processor, "process", watched)
    assert split_sentences(text, "de") == sentences
    assert len(text) > 5 * segment.WINDOW and max(seen) <= segment.WINDOW


@pytest.mark.parametrize("shift", range(8))
def test_a_sentence_longer_than_a_window_stays_whole(shift):
    """A window that finds no sentence end hands on from a word inside the sentence; where
    it begins is no sentence start, whatever abbreviation stands just before it."""
    from translator.documents import segment

    long = "y" * shift + " ".join(
        ["he met Mr. Smith and Dr. Jones at 5 p.m. in the U.S. capital"] * 40
    )
    text = long + ". After that, a sentence. And another."
    assert len(long) > segment.WINDOW
    assert split_sentences(text, "en") == [long + ".", "After that, a sentence.", "And another."]


def test_unknown_languages_use_english_rules():
    assert rules_language("de-DE") == "de" and rules_language("pt_BR") == "en"
    assert rules_language(None) == "en" and rules_language("xx") == "en"
    assert rules_language("deu_Latn") == "de" and rules_language("fra") == "fr"
    assert split_sentences("One dog. Two cats.", "xx") == ["One dog.", "Two cats."]


def test_layout_kept_and_each_sentence_translated():
    text = "  A man rides. Two dogs\n  play in the snow!\n\n\n A woman\treads.\n"
    calls = []

    def model(sentences):
        calls.append(list(sentences))
        return upper(sentences)

    # a tab inside a sentence is the model's to space; between sentences all is kept
    assert translate_text(text, model, "en") == text.upper().replace("\t", " ")
    assert calls == [["A man rides.", "Two dogs play in the snow!", "A woman reads."]]


def test_line_breaks_follow_the_alignment():
    text = "one two\n   three four. five six\nseven."
    out = translate_text(text, reverse, "en")
    # "one two three four." reversed: the words aligned to "one two" end the sentence, so
    # the break goes before its last word, with the next line's indentation
    assert out == "four. three two\n   one seven. six\nfive"


def test_without_alignment_breaks_keep_their_share_of_the_words():
    text = "a b c d\ne f g h."
    out = translate_text(text, lambda ss: [(s.upper(), None) for s in ss], "en")
    assert out == "A B C D\nE F G H."


@settings(max_examples=40, deadline=None)
@given(st.lists(st.sampled_from(["Word", "dog.", "Cat!", " ", "  ", "\n", "\n\n", "\t", "x?"])))
def test_identity_translation_keeps_lines_and_words(pieces):
    text = "".join(pieces)
    out = translate_text(text, lambda ss: [(s, None) for s in ss], "en")
    assert re.sub(r"[ \t]+", " ", out) == re.sub(r"[ \t]+", " ", text)


def test_format_of_extension_and_option():
    assert format_of("a.HTML", None) == "html" and format_of("a.htm", None) == "html"
    assert format_of("a.xhtml", None) == "html"
    assert format_of("a.md", None) == "markdown" and format_of("a.docx", None) == "docx"
    assert format_of("a.txt", None) is None and format_of("a.de", None) is None
    assert format_of("a.txt", "text") == "text"
    with pytest.raises(UserError, match="--format pdf: not one of text, html"):
        format_of("a.pdf", "pdf")


def test_text_formats_refuse_a_zip_and_bytes_not_utf8(tmp_path):
    with pytest.raises(UserError, match=r"a\.md: a zip file"):
        translate_bytes(b"PK\x03\x04rest", tmp_path / "a.md", "markdown", upper, "en")
    with pytest.raises(UserError, match=r"a\.txt: not UTF-8 text \(byte 0xff"):
        translate_bytes(b"ok \xff", tmp_path / "a.txt", "text", upper, "en")


@pytest.mark.parametrize("fmt, text", [("text", "Ein Hund.\n"), ("markdown", "# Ein *Hund*\n"),
                                       ("html", "<p>Ein Hund.</p>\n")])  # fmt: skip
def test_a_byte_order_mark_is_kept_and_never_reaches_the_model(tmp_path, fmt, text):
    seen = []

    def model(sentences):
        seen.extend(sentences)
        return upper(sentences)

    out = translate_bytes(b"\xef\xbb\xbf" + text.encode(), tmp_path / "a", fmt, model, "en")
    assert out.startswith(b"\xef\xbb\xbf") and out.count(b"\xef\xbb\xbf") == 1, out
    assert b"HUND" in out and not any("\ufeff" in s for s in seen), seen
    assert not translate_bytes(text.encode(), tmp_path / "a", fmt, upper, "en").startswith(b"\xef")


class Stop(Exception):
    pass


def test_journal_resumes_with_only_the_missing_sentences(tmp_path, monkeypatch):
    monkeypatch.setattr("translator.documents.units.BATCH", 2)
    source = tmp_path / "in.txt"
    source.write_text("One. Two. Three.\n\nFour. Five.\n", encoding="utf-8")
    output = tmp_path / "out.txt"
    seen = []

    def failing(sentences):
        seen.extend(sentences)
        if len(seen) > 2:
            raise Stop
        return upper(sentences)

    with pytest.raises(Stop):
        translate_document(source, output, "text", failing, "en", {"model": 1})
    assert not output.exists()
    rows = journal_path(output).read_text(encoding="utf-8").splitlines()
    assert json.loads(rows[0])["format"] == "text" and len(rows) == 3  # identity + 2
    with open(journal_path(output), "ab") as f:
        f.write(b'["Three.", "THR')  # a line a stop cut short
    resumed = []

    def counting(sentences):
        resumed.extend(sentences)
        return upper(sentences)

    translate_document(source, output, "text", counting, "en", {"model": 1})
    assert resumed == ["Three.", "Four.", "Five."]
    assert output.read_text(encoding="utf-8") == "ONE. TWO. THREE.\n\nFOUR. FIVE.\n"
    assert not journal_path(output).exists()


def test_journal_of_another_model_is_not_used(tmp_path):
    source = tmp_path / "in.txt"
    source.write_text("One. Two.\n", encoding="utf-8")
    output = tmp_path / "out.txt"
    journal_path(output).write_text('{"other": 1}\n["One.", "X", null]\n', encoding="utf-8")
    translate_document(source, output, "text", upper, "en", {"model": 1})
    assert output.read_text(encoding="utf-8") == "ONE. TWO.\n"


def test_a_refused_input_leaves_nothing(tmp_path):
    source = tmp_path / "in.docx"
    source.write_bytes(b"not a zip")
    output = tmp_path / "out.docx"
    with pytest.raises(UserError, match=r"in\.docx: not a docx file"):
        translate_document(source, output, "docx", upper, "en", {})
    assert list(tmp_path.iterdir()) == [source]


def test_a_translation_shorter_than_its_lines_joins_them():
    one_word = lambda ss: [("X", None) for _ in ss]  # noqa: E731
    assert translate_text("a b\nc d.\n\ne f\ng.\n", one_word, "en") == "X\n\nX\n"
    nothing = lambda ss: [("", []) for _ in ss]  # noqa: E731 (a model may end at once)
    assert translate_text("a\nb\n", nothing, "en") == "\n"
    assert translate_text("a\r\nb\r\n\r\nc\r\n", nothing, "en") == "\r\n\r\n\r\n"


def test_units_without_a_letter_are_copied_and_never_sent_to_the_model():
    from translator.documents.units import translate_all

    seen = []

    def recording(sentences):
        seen.extend(sentences)
        return upper(sentences)

    units = ["Ein Hund.", "42", "2024-01-05", "  ", "3,5  %", "Größe 3", "—", "水"]
    out = translate_all(units, recording)
    assert seen == ["Ein Hund.", "Größe 3", "水"]  # letters of any script are sent
    assert [t for t, _ in out] == ["EIN HUND.", "42", "2024-01-05", "  ", "3,5 %", "GRÖSSE 3",
                                   "—", "水"]  # fmt: skip
    assert out[4][1] == [(0, 0), (1, 1)]  # word for word, so markup around them stays
    assert translate_text("Ein Hund.\n\n| 42 | 7 |\n", upper, "de") == "EIN HUND.\n\n| 42 | 7 |\n"


@pytest.mark.parametrize(
    "text, lang, want",
    [
        (
            "It lives in $HOME/.cargo/bin. Then go.",
            "en",
            ["It lives in $HOME/.cargo/bin.", "Then go."],
        ),
        (
            "今天天气很好。我们去公园吧！好的。",
            "zh",
            ["今天天气很好。", "我们去公园吧！", "好的。"],
        ),
        (
            "今日は晴れです。公園に行きましょう。",
            "ja",
            ["今日は晴れです。", "公園に行きましょう。"],
        ),
    ],
)
def test_sentences_never_end_inside_a_word_and_end_at_full_width_stops(text, lang, want):
    assert split_sentences(text, lang) == want


def test_a_unit_too_long_for_a_model_goes_in_pieces_cut_where_clauses_end():
    from translator.documents.units import LONGEST, translate_all

    sent, expected = [], []

    def model(sentences):
        sent.extend(sentences)
        return reverse(sentences)

    model.expect = expected.append  # a progress bar's total: the texts sent
    words = [f"w{i}," if i % 50 == 49 else f"w{i}" for i in range(2 * LONGEST + 60)]
    (text, alignment), = translate_all([" ".join(words)], model)  # fmt: skip
    assert [s.split()[-1] for s in sent] == ["w99,", "w199,", words[-1]]
    assert all(len(s.split()) <= LONGEST for s in sent)
    assert expected == [len(sent)]
    out = text.split()
    assert sorted(out) == sorted(words)  # nothing cut off
    assert sorted(alignment) == sorted((i, j) for j, w in enumerate(out) for i in
                                       [words.index(w)])  # fmt: skip


def test_a_long_run_without_spaces_goes_in_pieces_cut_where_clauses_end():
    """Chinese text has no spaces to count words by: a paragraph of 3,600 characters goes
    in pieces of at most LONGEST * CHARS_A_WORD characters cut after its commas, all of it
    translated, each piece aligned to the one word the paragraph is."""
    from translator.documents.units import CHARS_A_WORD, LONGEST, translate_all

    sent = []

    def model(sentences):
        sent.extend(sentences)
        return [(s, [(i, i) for i in range(len(s.split()))]) for s in sentences]

    model.expect = lambda n: None
    clause = "一只狗在公园里跑来跑去，"  # 12 characters
    paragraph = clause * 300
    (text, alignment), = translate_all([paragraph], model)  # fmt: skip
    assert len(sent) > 1 and "".join("".join(s.split()) for s in sent) == paragraph
    assert all(len(s.replace(" ", "")) <= LONGEST * CHARS_A_WORD for s in sent)
    assert all(run.endswith("，") for s in sent for run in s.split())
    assert {i for i, _ in alignment} == {0}
    url = "https://example.com/" + "a" * 60  # a long ASCII word is never cut
    (text, _), = translate_all([url], model)  # fmt: skip
    assert text == url and sent[-1] == url
