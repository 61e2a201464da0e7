"""A user's text where it is matched (terms, required phrases, target prefixes): checked to be
valid Unicode, normalised once to NFC, refused where it holds nothing visible, and matched
without case by full case folding with every match mapped back to the text it was found in.
"""

from __future__ import annotations

import unicodedata

from translator.errors import UserError

# Unicode's Default_Ignorable_Code_Point ranges (DerivedCoreProperties.txt): zero-width
# spaces and joiners, direction marks, variation selectors, fillers, tag characters. A text
# of these (and whitespace) shows nothing, and sentencepiece drops many of them.
IGNORABLE = (
    (0x00AD, 0x00AD), (0x034F, 0x034F), (0x061C, 0x061C), (0x115F, 0x1160),
    (0x17B4, 0x17B5), (0x180B, 0x180F), (0x200B, 0x200F), (0x202A, 0x202E),
    (0x2060, 0x206F), (0x3164, 0x3164), (0xFE00, 0xFE0F), (0xFEFF, 0xFEFF),
    (0xFFA0, 0xFFA0), (0xFFF0, 0xFFF8), (0x1BCA0, 0x1BCA3), (0x1D173, 0x1D17A),
    (0xE0000, 0xE0FFF),
)  # fmt: skip


def invisible(char: str) -> bool:
    """Whitespace, a control character or a default-ignorable one."""
    if char.isspace() or unicodedata.category(char) == "Cc":
        return True
    code = ord(char)
    return any(lo <= code <= hi for lo, hi in IGNORABLE)


def blank(text: str) -> bool:
    """Whether `text` holds nothing visible (empty, whitespace, zero-width characters)."""
    return all(invisible(c) for c in text)


def checked(text: str, where: str) -> str:
    """`text` in NFC; a lone surrogate (which no UTF-8 text can hold) is a one-line error
    naming `where`."""
    return unicodedata.normalize("NFC", valid(text, where))


def valid(text: str, where: str) -> str:
    """`text`, unless it holds a lone surrogate: then a one-line error naming `where`."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as err:
        code = ord(text[err.start])
        raise UserError(f"{where}: not valid Unicode (lone surrogate U+{code:04X})") from None
    return text


def phrase(text: str, where: str) -> str:
    """A text that must say something (a required phrase, a term, a --prefix): checked and
    NFC; one that holds nothing visible is a one-line error naming `where`."""
    text = checked(text, where)
    if blank(text):
        raise UserError(
            f"{where}: {text!r} holds no text (only whitespace or zero-width characters)"
        )
    return text


def folded(text: str) -> tuple[str, list[int]]:
    """`text` case-folded (full folding: 'ß' -> 'ss', 'İ' -> 'i̇', 'ﬁ' -> 'fi'), and where
    each character of `text` begins in it, plus its length: starts[i] is the folded
    offset of text[i]. Folding is per character, so the pieces join up."""
    parts, starts, at = [], [], 0
    for char in text:
        part = char.casefold()
        parts.append(part)
        starts.append(at)
        at += len(part)
    starts.append(at)
    return "".join(parts), starts
