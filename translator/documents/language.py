"""The language a translated document declares: the tags in its markup over translated
text (HTML's lang, Word's w:lang) name the target's, as every word there is the model's.

A model's codes come in several spellings (a config's `de`, OPUS-MT's `deu`, NLLB's
`deu_Latn`); documents want BCP 47 tags, shortest form (`de`, `zh-Hant`, a macrolanguage's
member read as it: `arb` is `ar`), which langcodes gives.
"""

from __future__ import annotations

from dataclasses import dataclass

# scripts written right to left (Unicode's bidirectional class R or AL)
RIGHT_TO_LEFT = frozenset("Arab Hebr Syrc Thaa Nkoo Adlm Rohg Samr Mand Mend Yezi".split())
EAST_ASIAN = frozenset("Hani Hans Hant Hira Kana Jpan Hang Kore Bopo".split())
NO_LANGUAGE = frozenset({"mul", "und", "zxx", "mis"})


def bcp47(code: str | None) -> str | None:
    """`code` as a BCP 47 tag (`deu_Latn` -> `de`, `zho_Hant` -> `zh-Hant`); None for none,
    or a code that names no single language (`mul`) or that langcodes cannot read."""
    import langcodes

    if not code:
        return None
    try:
        tag = langcodes.standardize_tag(code.replace("_", "-"), macro=True)
        lang = langcodes.Language.get(tag)
    except ValueError:  # langcodes' LanguageTagError is one
        return None
    if not lang.is_valid() or lang.language in NO_LANGUAGE or lang.language is None:
        return None
    return tag


def _parsed(tag: str):
    import langcodes

    try:
        return langcodes.Language.get(tag.replace("_", "-"), normalize=True).prefer_macrolanguage()
    except ValueError:
        return None


def _script(tag: str) -> str | None:
    lang = _parsed(tag)
    return None if lang is None else lang.maximize().script


@dataclass(frozen=True)
class Retag:
    """The target language as a translated document names it, read once (retag_for):
    `target`, a BCP 47 tag; `regional`, as Word writes languages, with a region (`de-DE`,
    `zh-Hant-TW`); its writing `direction`, as HTML's dir names it; and whether it is
    written in a Chinese, Japanese or Korean script (`east_asian`)."""

    target: str
    regional: str
    direction: str
    east_asian: bool


def _regional(tag: str) -> str:
    lang = _parsed(tag)
    if lang is None or lang.territory:
        return tag
    territory = lang.maximize().territory
    return f"{tag}-{territory}" if territory else tag


def retag_for(target: str | None) -> Retag | None:
    """The Retag for a translation into `target` (a model's code, any spelling); None where
    it names no language, so that no tag changes."""
    tgt = bcp47(target)
    if tgt is None:
        return None
    script = _script(tgt)
    return Retag(tgt, _regional(tgt), "rtl" if script in RIGHT_TO_LEFT else "ltr",
                 script in EAST_ASIAN)  # fmt: skip
