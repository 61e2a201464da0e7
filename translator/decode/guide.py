"""What a user may say a translation must hold, as target ids: the words it begins with (a
prefix) and phrases it must contain somewhere (constraints, or terms found in the source).
Each mistake is a UserError that names the line and the phrase."""

from __future__ import annotations

from dataclasses import dataclass

from translator.data.user_text import blank, checked
from translator.decode.rules import phrases_problem
from translator.errors import UserError


def target_ids(tokenizer, texts: list[str]) -> list[list[int]]:
    """Target subword ids of texts, without <bos> and <eos>."""
    return [t[1:-1] for t in tokenizer.encode_tgt(texts)] if texts else []


def target_prefixes(
    tokenizer, texts: list[str | None] | None, lines: list[str], steps: int | None
) -> list[list[int]] | None:
    """The target ids each line's translation must begin with (translate --prefix), or None
    where no line has one; a prefix the model cannot fit before its <eos> is a UserError. A
    prefix of nothing visible (whitespace, zero-width characters) is none."""
    if not texts or not any(texts):
        return None
    if len(texts) != len(lines):
        raise UserError(f"{len(texts)} prefixes for {len(lines)} lines: give one per line")
    texts = [checked(t or "", f"prefix {n}") for n, t in enumerate(texts, 1)]
    ids = target_ids(tokenizer, ["" if blank(t) else t for t in texts])
    for n, p in enumerate(ids, 1):
        if steps is not None and len(p) >= steps:
            raise UserError(
                f"prefix {n}: {len(p)} subwords, more than the model's output limit of {steps - 1}"
            )
    return ids


def required_phrases(
    tokenizer,
    phrases: list[list[str]] | None,
    lines: list[str],
    steps: int | None,
    beam: int,
    prefixes: list[list[int]] | None = None,
) -> list[list[list[int]]] | None:
    """Each line's phrases as target ids (translate --constraint), or None where no line has
    any. A UserError for an empty phrase, more phrases than the beam can keep apart (a beam
    of k holds k - 1), and phrases (with the line's prefix) longer than the model's output.
    A phrase of nothing visible, or of nothing the subword model keeps, is empty."""
    if not phrases or not any(phrases):
        return None
    if len(phrases) != len(lines):
        raise UserError(f"constraints for {len(phrases)} lines, but {len(lines)} lines")
    out = []
    for n, given in enumerate(phrases, 1):
        where = f"line {n}" if len(lines) > 1 else "the sentence"
        given = [checked(text, f"{where}: a constraint").strip() for text in given]
        if any(blank(text) for text in given):
            raise UserError(f"{where}: a constraint is empty; give the words it must hold")
        if problem := phrases_problem(len(given), beam, "constraints"):
            raise UserError(f"{where}: {problem}: give --beam")
        ids = target_ids(tokenizer, given)
        for text, phrase_ids in zip(given, ids):
            if not phrase_ids:  # characters the subword model's normaliser drops
                raise UserError(f"{where}: the constraint {text!r} holds no subword of the "
                                "model; give the words it must hold")  # fmt: skip
        used = sum(map(len, ids)) + (len(prefixes[n - 1]) if prefixes else 0)
        if steps is not None and used >= steps:
            raise UserError(
                f"{where}: the constraints take {used} subwords, more than the model's output "
                f"limit of {steps - 1}"
            )
        out.append(ids)
    return out


@dataclass(frozen=True)
class Guides:
    """Per line: the target prefix and the required phrases (either may be None for all)."""

    prefixes: list[list[int]] | None
    phrases: list[list[list[int]]] | None

    @classmethod
    def read(cls, tokenizer, lines, steps, beam, prefixes=None, constraints=None):
        """The guides of `lines` from the user's texts; None when there are none."""
        pre = target_prefixes(tokenizer, prefixes, lines, steps)
        phrases = required_phrases(tokenizer, constraints, lines, steps, beam, pre)
        return None if pre is None and phrases is None else cls(pre, phrases)

    @classmethod
    def joined(cls, parts: list[tuple[int, Guides | None]]) -> Guides | None:
        """The guides of requests' lines put one after another: (lines, guides) each; a
        request without guides has none for its lines."""
        if all(g is None for _, g in parts):
            return None

        def side(name: str, empty):
            given = [(n, None if g is None else getattr(g, name)) for n, g in parts]
            if all(items is None for _, items in given):
                return None
            return [x for n, items in given for x in (items or [empty() for _ in range(n)])]

        return cls(side("prefixes", list), side("phrases", list))

    def of(self, rows: list[int]) -> Guides:
        """The guides of those lines, in that order."""
        pick = lambda items: None if items is None else [items[r] for r in rows]  # noqa: E731
        return Guides(pick(self.prefixes), pick(self.phrases))
