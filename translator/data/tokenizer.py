"""Sentencepiece subword models: trained on the training split, cached, carried in checkpoints.

Ids are fixed across all models so the rest of the code can rely on them:
pad=0, unk=1, bos=2, eos=3.

Corpus tags (`<bt>`) and target-language tags (`<2fr>`) are trained as user-defined symbols,
which sentencepiece would find in any text it encodes. A loaded model holds them as control
pieces instead (`input_only_tags`): their ids come only from the options that insert them, and
a text that spells a tag is encoded as ordinary text. The stored bytes stay as trained.
"""

from __future__ import annotations

import hashlib
import io
import json
import logging
import os
from pathlib import Path

import sentencepiece as spm
from sentencepiece import sentencepiece_model_pb2 as model_pb2

from translator.config import TokenizerConfig
from translator.data.user_text import valid
from translator.errors import UserError
from translator.specials import BOS, EOS, PAD, UNK

log = logging.getLogger(__name__)


def cache_dir() -> Path:
    root = os.environ.get("TRANSLATOR_CACHE") or Path.home() / ".cache" / "translator"
    return Path(root) / "sentencepiece"


def _train_model(
    sentences: list[str], cfg: TokenizerConfig, seed: int, symbols: tuple[str, ...] = ()
) -> bytes:
    out = io.BytesIO()
    spm.set_random_generator_seed(seed)
    # hard_vocab_limit=False makes vocab_size an upper bound, so a small corpus
    # (the demo) never fails with "vocabulary size too high".
    try:
        spm.SentencePieceTrainer.train(
            sentence_iterator=iter(sentences),
            model_writer=out,
            vocab_size=cfg.vocab_size,
            model_type=cfg.model_type,
            character_coverage=cfg.character_coverage,
            byte_fallback=cfg.byte_fallback,
            input_sentence_size=cfg.max_sentences,
            shuffle_input_sentence=True,
            hard_vocab_limit=False,
            pad_id=PAD,
            unk_id=UNK,
            bos_id=BOS,
            eos_id=EOS,
            user_defined_symbols=list(symbols),  # corpus tags: one piece each, never split
            num_threads=os.cpu_count() or 1,
            minloglevel=2,
        )
    except RuntimeError as err:  # e.g. vocab_size below the number of distinct characters
        reason = " ".join(str(err).split()).rsplit("] ", 1)[-1]
        raise UserError(
            f"sentencepiece could not train with tokenizer.vocab_size={cfg.vocab_size}"
            f": {reason[:200]}"
        ) from None
    return out.getvalue()


def cached_model_path(
    sentences: list[str], cfg: TokenizerConfig, seed: int, symbols: tuple[str, ...] = ()
) -> Path:
    """Where the model trained from exactly these sentences and settings is cached."""
    key = [cfg.model_keys(), seed, spm.__version__] + ([list(symbols)] if symbols else [])
    digest = hashlib.sha256(json.dumps(key).encode())
    for s in sentences:
        digest.update(s.encode("utf-8"))
        digest.update(b"\n")
    return cache_dir() / f"{digest.hexdigest()[:32]}.model"


def train_cached(
    sentences: list[str], cfg: TokenizerConfig, seed: int, symbols: tuple[str, ...] = ()
) -> bytes:
    """The sentencepiece model of `sentences`, trained once and then read from the cache."""
    symbols = tuple(symbols)
    path = cached_model_path(sentences, cfg, seed, symbols)
    if path.is_file():
        log.info("sentencepiece: reusing cached model %s", path)
        return path.read_bytes()
    log.info("sentencepiece: training a %s model on %d sentences", cfg.model_type, len(sentences))
    data = _train_model(sentences, cfg, seed, symbols)
    pieces = load_processor(data).get_piece_size()
    if pieces < cfg.vocab_size:  # (vocab_size is an upper bound: _train_model)
        log.info(
            "sentencepiece: %s pieces, fewer than tokenizer.vocab_size=%s: all this text "
            "gives", f"{pieces:,}", f"{cfg.vocab_size:,}",
        )  # fmt: skip
    try:
        from translator.fileio import atomic_write_bytes

        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_bytes(path, data)
    except OSError as err:  # a read-only cache only costs a re-train next time
        log.warning("sentencepiece: could not cache the model (%s)", err)
    return data


def fingerprint(src_model: bytes, tgt_model: bytes | None, vocab: dict | None = None) -> str:
    """A hash of the model bytes (and of the piece tables, data/vocab.py, where there are
    any): a checkpoint's weights belong to exactly this tokenizer."""
    digest = hashlib.sha256(src_model)
    digest.update(tgt_model or b"")
    if vocab is not None:
        digest.update(json.dumps(vocab, ensure_ascii=False).encode())
    return digest.hexdigest()


def input_only_tags(data: bytes) -> bytes:
    """The model `data` with its user-defined pieces (the tags) as control pieces, which
    `encode` never produces from text while `piece_to_id` and `id_to_piece` still know them;
    ids and every other piece unchanged. `data` itself when it has none."""
    proto = model_pb2.ModelProto()
    try:
        proto.ParseFromString(data)
    except Exception:  # protobuf's DecodeError; sentencepiece then reports the model corrupt
        return data
    piece = model_pb2.ModelProto.SentencePiece
    tags = [p for p in proto.pieces if p.type == piece.USER_DEFINED]
    if not tags:
        return data
    for p in tags:
        p.type = piece.CONTROL
    return proto.SerializeToString()


def load_processor(data: bytes) -> spm.SentencePieceProcessor:
    """A processor of the model `data` whose tags are input-only (`input_only_tags`); every
    place that encodes text loads its model here."""
    sp = spm.SentencePieceProcessor()
    sp.LoadFromSerializedProto(input_only_tags(data))
    return sp


class Tokenizer:
    """One joint sentencepiece model, or one per side."""

    # An imported model's piece tables (data/vocab.py's VocabTokenizer); None: the ids are
    # sentencepiece's own.
    vocab: dict | None = None

    def __init__(self, src_model: bytes, tgt_model: bytes | None = None):
        self.src_bytes = src_model
        self.tgt_bytes = tgt_model
        self.src = self._load(src_model)
        self.tgt = self.src if tgt_model is None else self._load(tgt_model)

    @staticmethod
    def _load(data: bytes) -> spm.SentencePieceProcessor:
        try:
            return load_processor(data)
        except (RuntimeError, OSError, TypeError):
            raise UserError("the sentencepiece model in the checkpoint is corrupt") from None

    @property
    def joint(self) -> bool:
        return self.tgt_bytes is None

    @property
    def src_vocab_size(self) -> int:
        return self.src.get_piece_size()

    @property
    def tgt_vocab_size(self) -> int:
        return self.tgt.get_piece_size()

    def encode_src(self, lines: list[str]) -> list[list[int]]:
        return [ids + [EOS] for ids in _encoded(self.src, lines, "source")]

    def encode_tgt(self, lines: list[str]) -> list[list[int]]:
        """Target ids framed as <bos> ... <eos>."""
        return [[BOS] + ids + [EOS] for ids in _encoded(self.tgt, lines, "target")]

    def decode_tgt(self, ids: list[list[int]]) -> list[str]:
        """Texts of target ids (specials dropped). Byte-fallback pieces can spell a line
        break; a translation stays one line, so line breaks become spaces."""
        texts = self.tgt.decode([[i for i in seq if i > EOS] for seq in ids])
        return [" ".join(t.splitlines()) for t in texts]

    def state(self) -> dict:
        return {"src": self.src_bytes, "tgt": self.tgt_bytes, "sha256": self.fingerprint()}

    def fingerprint(self) -> str:
        return fingerprint(self.src_bytes, self.tgt_bytes)

    @classmethod
    def from_state(cls, state: dict) -> Tokenizer:
        """A state without piece tables; data/vocab.py's tokenizer_from_state takes any."""
        return cls(state["src"], state.get("tgt"))

    def tag_ids(self, tags) -> tuple[list[int], list[int]]:
        """The ids of corpus tags (user symbols) in the source and the target vocabulary; a
        tag the vocabulary does not hold as a piece of its own is left out."""
        sides = []
        for sp in (self.src, self.tgt):
            ids = [sp.piece_to_id(t) for t in tags]
            sides.append([i for i, t in zip(ids, tags) if i != UNK and sp.id_to_piece(i) == t])
        return sides[0], sides[1]

    def never_output(self, tags) -> tuple[int, ...]:
        """The target ids of corpus tags: input-only, so no search may output them."""
        return tuple(self.tag_ids(tags)[1])

    def tag_prefix(self, tag: str | None, tags) -> list[int]:
        """The source ids that `tag` puts before a sentence ([] for None); a tag that is not
        one of the model's corpus `tags` is a one-line error."""
        if tag is None:
            return []
        known = self.tag_ids([tag])[0] if tag in tags else []
        if not known:
            listed = ", ".join(tags) if tags else "none (it was trained without data.corpora tags)"
            raise UserError(f"--tag {tag}: not a tag of this model; its tags: {listed}")
        return known

    @classmethod
    def train(
        cls, pairs: list[tuple[str, str]], cfg: TokenizerConfig, seed: int, symbols=()
    ) -> Tokenizer:
        """`symbols`: corpus tags, each a piece of the source vocabulary (of the joint one)."""
        src = [s for s, _ in pairs]
        tgt = [t for _, t in pairs]
        symbols = tuple(symbols)
        if cfg.joint:
            return cls(train_cached(src + tgt, cfg, seed, symbols))
        return cls(train_cached(src, cfg, seed, symbols), train_cached(tgt, cfg, seed))


def _encoded(sp: spm.SentencePieceProcessor, lines: list[str], side: str) -> list[list[int]]:
    """sentencepiece's ids of `lines`; a line it cannot take (not valid Unicode: a lone
    surrogate, which a Python caller can pass) is a one-line error naming the line."""
    try:
        return sp.encode(lines, out_type=int)
    except TypeError:
        for i, line in enumerate(lines, 1):
            if not isinstance(line, str):
                raise UserError(
                    f"{side} line {i}: text expected, got {type(line).__name__}"
                ) from None
            valid(line, f"{side} line {i}")
        raise
