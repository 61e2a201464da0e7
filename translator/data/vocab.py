"""Vocabularies whose ids are not sentencepiece's own: a released model (Marian's vocab.json)
numbers the pieces its own way, and its embedding rows follow that numbering.

A table lists the pieces by id. Ids 0-3 are translator's specials (specials.py), whatever the
released model called them, so search, loss and batching need not know the table exists.
`VocabProcessor` puts a table in front of a sentencepiece processor and offers the part of the
processor's interface the rest of the code uses (encode, decode, id_to_piece, piece_to_id,
get_piece_size, and confidence's IsControl, IsUnknown, GetScore), in table ids: pieces the
table lacks are <unk>.

In a checkpoint, the tokenizer's state carries the tables under "vocab":
    {"src": [piece, ...], "tgt": [piece, ...] or None (the source table, shared),
     "hidden": [id, ...] (absent where there are none)}
"hidden" lists the target ids whose pieces a text never shows, as transformers'
decode(skip_special_tokens=True) drops them: an NLLB model's language codes, <mask> and
its embedding rows without a piece (pretrained/m2m100.py).
"""

from __future__ import annotations

import sentencepiece as spm

from translator.data.tokenizer import Tokenizer, fingerprint
from translator.errors import UserError
from translator.specials import BOS, EOS, PAD, SPECIAL_PIECES, UNK


class VocabProcessor:
    """A sentencepiece processor that speaks the ids of a piece table."""

    def __init__(self, sp: spm.SentencePieceProcessor, pieces: list[str], hidden=()):
        self.sp, self.pieces, self.hidden = sp, list(pieces), frozenset(hidden)
        # <pad> and <s> never come from text: their pieces are not looked up
        self.ids = {p: i for i, p in enumerate(self.pieces) if i not in (PAD, BOS)}

    def encode(self, lines, out_type=int, add_bos=False, add_eos=False, **options):
        """Ids (or pieces, with out_type=str) of a line or of a list of lines; `add_bos`,
        `add_eos` frame the ids with translator's <s> and </s>, not sentencepiece's."""
        if out_type is str:
            return self.sp.encode(lines, out_type=str, add_bos=add_bos, add_eos=add_eos, **options)
        found = self.sp.encode(lines, out_type=str, **options)
        head, tail = [BOS] * add_bos, [EOS] * add_eos
        if isinstance(lines, str):
            return head + [self.ids.get(p, UNK) for p in found] + tail
        return [head + [self.ids.get(p, UNK) for p in seq] + tail for seq in found]

    def decode(self, ids):
        """The text of a list of ids, or the texts of a list of such lists."""
        if ids and isinstance(ids[0], list):
            return [self.decode(seq) for seq in ids]
        # A table may hold pieces its sentencepiece model lacks (the other side's, in a shared
        # vocabulary), which decode_pieces leaves as they are: their word marks become spaces,
        # as transformers' MarianTokenizer makes them.
        text = self.sp.decode_pieces([self.pieces[i] for i in ids if i not in self.hidden])
        return text.replace("\u2581", " ").strip()

    def id_to_piece(self, i: int) -> str:
        return self.pieces[i]

    def piece_to_id(self, piece: str) -> int:
        return self.ids.get(piece, UNK)

    def get_piece_size(self) -> int:
        return len(self.pieces)

    # What confidence (decode/confidence.py) asks of a processor, in table ids: a piece's
    # score is its sentencepiece model's, and one that model lacks is unknown.
    def IsControl(self, i: int) -> bool:  # noqa: N802 (sentencepiece's names)
        return i in (PAD, BOS, EOS) or i in self.hidden

    def IsUnknown(self, i: int) -> bool:  # noqa: N802
        return i == UNK or self.sp.IsUnknown(self._own(i))

    def GetScore(self, i: int) -> float:  # noqa: N802
        return self.sp.GetScore(self._own(i))

    def _own(self, i: int) -> int:
        """The sentencepiece model's id of table id `i`'s piece."""
        return self.sp.piece_to_id(self.pieces[i])


def table_processors(src, tgt, vocab: dict) -> tuple[VocabProcessor, VocabProcessor]:
    """Each side's processor behind its piece table (the source's where one serves both);
    only the target's hides ids, as only target ids become text."""
    hidden = vocab.get("hidden") or ()
    return VocabProcessor(src, vocab["src"]), VocabProcessor(
        tgt, vocab["tgt"] or vocab["src"], hidden
    )


class VocabTokenizer(Tokenizer):
    """Sentencepiece models (one per side) with a piece table per side (one, shared, where
    `tgt_pieces` is None); `hidden`: the target ids no text shows."""

    def __init__(
        self,
        src_model: bytes,
        tgt_model: bytes | None,
        src_pieces: list[str],
        tgt_pieces: list[str] | None = None,
        hidden: list[int] | None = None,
    ):
        super().__init__(src_model, tgt_model)
        self.vocab = {
            "src": list(src_pieces),
            "tgt": None if tgt_pieces is None else list(tgt_pieces),
        }
        if hidden:  # a key only where there are ids: Marian's tables need none
            self.vocab["hidden"] = list(hidden)
        self.src, self.tgt = table_processors(self.src, self.tgt, self.vocab)

    @property
    def shared_vocab(self) -> bool:
        """One id space for both sides (the sentencepiece models may still be two)."""
        return self.vocab["tgt"] is None

    def state(self) -> dict:
        return {**super().state(), "vocab": self.vocab}

    def fingerprint(self) -> str:
        return fingerprint(self.src_bytes, self.tgt_bytes, self.vocab)

    @classmethod
    def from_state(cls, state: dict) -> VocabTokenizer:
        vocab = state["vocab"]
        src, tgt = _table(vocab, "src"), _table(vocab, "tgt", optional=True)
        size = len(tgt or src)
        hidden = vocab.get("hidden")
        if hidden is not None and not (
            isinstance(hidden, list) and all(type(i) is int and EOS < i < size for i in hidden)
        ):
            raise UserError(
                f"key 'tokenizer.vocab.hidden' must list target ids {EOS + 1} .. {size - 1}"
            )
        return cls(state["src"], state.get("tgt"), src, tgt, hidden)


def tokenizer_from_state(state: dict) -> Tokenizer:
    """The tokenizer a checkpoint's state describes: with piece tables (an imported model's)
    a VocabTokenizer, else a Tokenizer of sentencepiece's own ids."""
    if state.get("vocab") is not None:
        return VocabTokenizer.from_state(state)
    return Tokenizer.from_state(state)


def _table(vocab, side: str, optional: bool = False) -> list[str] | None:
    """The piece table of `side`, checked: a list of strings, specials first."""
    table = vocab.get(side) if isinstance(vocab, dict) else None
    if table is None and optional:
        return None
    if not isinstance(table, list) or not all(isinstance(p, str) for p in table):
        raise UserError(f"key 'tokenizer.vocab.{side}' must be a list of pieces")
    if len(table) <= len(SPECIAL_PIECES):
        raise UserError(f"key 'tokenizer.vocab.{side}' holds only {len(table)} pieces")
    return table
