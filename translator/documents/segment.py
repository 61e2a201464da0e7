"""Sentence splitting of a paragraph into character spans.

`sentence_spans(text, lang)` gives [start, end) spans of `text`, one per sentence, that
together hold every non-space character of it; the whitespace between sentences (and before
the first, after the last) lies outside the spans, so a caller puts the text back by
replacing each span and keeping the rest byte for byte.

The splitter is pysbd (rules per language, abbreviations and numbers kept whole), chosen
over sentencex on scripts/bench/bench_segment.py (docs/documents.md has the figures). A
language pysbd has no rules for is split by its English rules.

For German one more start is found: a capitalised article or small number word (`Ein`,
`Der`, `Zwei`) after a word or a full stop. German writes those with a capital only at a
sentence's start, so one in mid-text starts a sentence whose predecessor lacks its stop (a
caption, a heading run into the text), which pysbd cannot see; and pysbd reads a stop after
a word it lists as an abbreviation (`Bart.`) or after an ordinal (`Nummer 10.`) as no
boundary, where such a word after it says otherwise. A title with a capital article in
mid-sentence (`Die Zeit`) is split too: in Multi30k's 29,000 German training sentences the
rule fires inside a sentence once (a garbled line), against 18 of the 19 boundaries after a
test caption with no stop. English is left out: its names take `The` (`The Magpie Cafe`).
"""

from __future__ import annotations

import re
from functools import lru_cache

DEFAULT_LANG = "en"
# where a sentence may end: a stop (closing quotes or brackets after it) before more text.
# A paragraph without one is one sentence, found without pysbd (about 1 ms a sentence).
# a stop and the start of what follows it: after a space, or straight after the full-width
# stops of scripts written without spaces
_MAY_END = re.compile(r"[.!?…。！？؟।][\"'”’»)\]]*\s+\S|[。！？][」』”’）)]*\S")
# three-letter codes (NLLB's deu_Latn, M2M's) of the languages pysbd has rules for
ISO_639_3 = {"amh": "am", "ara": "ar", "arb": "ar", "bul": "bg", "dan": "da", "deu": "de",
             "ell": "el", "eng": "en", "spa": "es", "fas": "fa", "pes": "fa", "fra": "fr",
             "hin": "hi", "hye": "hy", "ita": "it", "jpn": "ja", "kaz": "kk", "mar": "mr",
             "mya": "my", "nld": "nl", "pol": "pl", "rus": "ru", "slk": "sk", "urd": "ur",
             "zho": "zh"}  # fmt: skip
# a stop, then closing quotes or brackets (a space before French guillemets allowed) or
# footnote marks ([2], [^1]), then a space and an upper-case letter (after an opening quote
# perhaps): a boundary pysbd misses for German's „…“ and »…«, for any language after [2]
_CLOSED_END = re.compile(
    r"[.!?…](?:[\s\u202f]?[\"“”»«’‘›‹)\]]|\[\^?\w{1,10}\])+\s+(?=[\"„“”»«‹›‚‘(]?(\w))"
)
# pysbd's time grows faster than a paragraph's length (a paragraph of 1,000 sentences takes
# about 4 times as long a character as one of 30), so a long paragraph is split a window of
# WINDOW characters at a time; a window's cuts in its last MARGIN characters, where what
# follows is cut off, are found again by the next window (_pysbd_cuts).
WINDOW, MARGIN = 2000, 400
# words capitalised only at a sentence's start (module docstring), per pysbd language
_STARTERS = {
    "de": "Ein Eine Der Die Das Zwei Drei Vier Fünf Sechs Mehrere Einige Viele",
}
# one of them after a letter, a digit or a stop and a space, and not the start of a
# compound (`Ein-Mann-Orchester`); quotes, colons and dashes before it are left alone
_START_AFTER = {
    lang: re.compile(r"(?<=[^\W_.]|\.)\s+((?:" + "|".join(words.split()) + r")(?=\s))")
    for lang, words in _STARTERS.items()
}


def rules_language(lang: str | None) -> str:
    """The pysbd language for a model's source language code ('de', 'de-DE', 'pt_BR',
    'deu_Latn', None): its primary subtag when pysbd has rules for it, English otherwise."""
    from pysbd.languages import LANGUAGE_CODES

    code = (lang or "").replace("_", "-").split("-")[0].lower()
    code = ISO_639_3.get(code, code)
    return code if code in LANGUAGE_CODES else DEFAULT_LANG


@lru_cache(maxsize=16)
def _segmenter(lang: str):
    import pysbd

    # clean=False: the text is segmented as given, so segments are found back in it
    return pysbd.Segmenter(language=lang, clean=False, char_span=False)


def cuts_to_spans(text: str, cuts: list[int]) -> list[tuple[int, int]]:
    """Spans between the cut offsets `cuts` (sentence starts), each stripped of whitespace;
    empty ones dropped. Every non-space character of `text` lands in exactly one span. A
    cut inside a run of non-space characters after an ASCII one is dropped: pysbd cuts
    "$HOME/.cargo/bin" after its "/."; scripts written without spaces ("。") keep theirs."""
    spans = []
    bounds = sorted({c for c in cuts if 0 < c < len(text) and (
        text[c - 1].isspace() or text[c].isspace() or not text[c - 1].isascii())})  # fmt: skip
    for start, end in zip([0, *bounds], [*bounds, len(text)], strict=True):
        while start < end and text[start].isspace():
            start += 1
        while end > start and text[end - 1].isspace():
            end -= 1
        if start < end:
            spans.append((start, end))
    return spans


def segments_to_cuts(text: str, segments: list[str]) -> list[int]:
    """The offsets in `text` where each of `segments` (in order) starts; a segment not found
    as given (a splitter that changed it) adds no cut, so its text joins its neighbour."""
    cuts, cursor = [], 0
    for seg in segments:
        piece = seg.strip()
        if not piece:
            continue
        at = text.find(piece, cursor)
        if at < 0:
            continue
        cuts.append(at)
        cursor = at + len(piece)
    return cuts


def _pysbd_cuts(text: str, rules: str) -> list[int]:
    """Where pysbd starts sentences in `text`, a window at a time (WINDOW). Its segments are
    placed by segments_to_cuts: pysbd's own placement (segment()) searches the text from its
    start for each one, which takes minutes for a paragraph of thousands of sentences. A
    window that keeps no cut is followed by one begun at a word inside a sentence, whose
    first segment starts at that word: a start that counts only where the window before
    found it too."""
    process = _segmenter(rules).processor
    cuts, start, seen = [], 0, set()
    while True:
        end = min(len(text), start + WINDOW)
        piece = text[start:end]
        found = [start + c for c in segments_to_cuts(piece, process(piece).process())]
        found = [c for c in found if c > start or c in seen]
        if end == len(text):
            return cuts + found
        kept = [c for c in found if c <= end - MARGIN]
        cuts += kept
        if kept:
            start, seen = kept[-1], set()
        else:  # the last word start before the margin (a whole word: pysbd reads its stop)
            at = end - MARGIN
            while at > start + 1 and not text[at - 1].isspace():
                at -= 1
            start, seen = (at if at > start + 1 else end - MARGIN), set(found)


def sentence_spans(text: str, lang: str | None = DEFAULT_LANG) -> list[tuple[int, int]]:
    """[start, end) spans of the sentences of `text` (module docstring); `lang`: the source
    language code, English rules when pysbd has none for it."""
    if not text.strip():
        return []
    rules = rules_language(lang)
    cuts = []
    if (starts := _START_AFTER.get(rules)) is not None:
        cuts = [m.start(1) for m in starts.finditer(text)]
    if _MAY_END.search(text):
        cuts += _pysbd_cuts(text, rules)
    cuts += [m.end() for m in _CLOSED_END.finditer(text) if m.group(1).isupper()]
    return cuts_to_spans(text, cuts)


def split_sentences(text: str, lang: str | None = DEFAULT_LANG) -> list[str]:
    """The sentences of `text` as strings (sentence_spans' spans cut out)."""
    return [text[a:b] for a, b in sentence_spans(text, lang)]
