"""Strings in, strings out: a trained model, its tokenizer and its decoding settings."""

from __future__ import annotations

import contextlib
import logging
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import torch

from translator.config import Config, DecodeConfig
from translator.data.batching import pad_ids
from translator.data.tokenizer import Tokenizer
from translator.data.user_text import valid
from translator.decode.guide import Guides
from translator.decode.rules import cut, nbest_problem
from translator.decode.score import Score, score_in_batches, teacher_forced
from translator.decode.search import decode
from translator.errors import UserError
from translator.models.base import Seq2Seq
from translator.progress import progress_bar
from translator.runtime import autocast, pick_device
from translator.specials import EOS

log = logging.getLogger(__name__)


@dataclass
class Translation:
    text: str
    score: float
    tokens: tuple[int, ...] = ()  # target subword ids, without <bos>/<eos>


def source_ids(
    tokenizer, lines: list[str], limit: int, prefix=()
) -> tuple[list[int], list[list[int]]]:
    """(indices of the lines that are not blank, their source subword ids, after `prefix`:
    a corpus tag's id); a source longer than `limit` subwords is cut (with a warning). A
    lone surrogate, which sentencepiece cannot take, is a UserError naming the line."""
    todo = [i for i, line in enumerate(lines) if line.strip()]
    for i in todo:
        valid(lines[i], f"line {i + 1}")
    ids = tokenizer.encode_src([lines[i] for i in todo]) if todo else []
    if prefix:
        ids = [[*prefix, *s] for s in ids]
    return todo, cut(ids, limit, todo)


def in_batches(
    tokenizer,
    lines,
    limit: int,
    dc,
    nbest: int,
    progress: bool,
    run_batch,
    workers: int = 1,
    prefix=(),
    guides: Guides | None = None,
):
    """Translate `lines` in length-sorted batches of dc.batch_size with `run_batch(ids, dc,
    nbest, guides)` (`guides`: each line's target prefix and required phrases, decode/
    guide.py, or None); results come back in input order. A blank line yields an empty translation
    without running the model; a source longer than `limit` subwords is cut (with a warning).
    With `workers` > 1, that many batches run at once on threads (for an engine that releases
    the GIL, such as CTranslate2), and input that would make fewer batches is split so that
    every worker gets one."""
    results: list[list[Translation]] = [[Translation("", 0.0)] * nbest for _ in lines]
    todo, ids = source_ids(tokenizer, lines, limit, prefix)
    if not todo:
        return results
    order = sorted(range(len(todo)), key=lambda j: len(ids[j]))
    size = dc.batch_size
    if workers > 1 and len(order) < workers * size:
        size = max(1, -(-len(order) // workers))
    batches = [order[i : i + size] for i in range(0, len(order), size)]
    bar = progress_bar(
        total=len(batches), desc="translate", unit="batch", enabled=progress, leave=False
    )

    def run(batch: list[int]) -> list[list[Translation]]:
        part = None if guides is None else guides.of([todo[j] for j in batch])
        return list(run_batch([ids[j] for j in batch], dc, nbest, part))

    with bar, contextlib.ExitStack() as stack:
        if workers > 1 and len(batches) > 1:
            pool = stack.enter_context(ThreadPoolExecutor(workers, "translate"))
            done = pool.map(run, batches)
        else:
            done = map(run, batches)
        for batch, found in zip(batches, done):
            for j, hyps in zip(batch, found):
                results[todo[j]] = hyps
            bar.update()
    return results


class Translator:
    def __init__(
        self,
        model: Seq2Seq,
        tokenizer: Tokenizer,
        cfg: Config,
        device: torch.device | None = None,
        dtype: torch.dtype = torch.float32,
        name: str | None = None,
        max_source: int | None = None,
    ):
        self.device = device or pick_device("auto")
        self.model = model.to(self.device).eval()
        self.tokenizer, self.cfg, self.dtype = tokenizer, cfg, dtype
        self.name = name or cfg.model.type  # for messages and picture titles
        self.max_source = max_source or cfg.model.max_positions  # longer input is cut
        # How translate() picks tokens: None searches (greedy or beam, by the beam size),
        # a translator.decode.sampling.Sampling draws them.
        self.sampling = None
        self.prefix: list[int] = []  # source ids put before every line: a corpus tag's

    @property
    def attention_layers(self) -> int:
        return self.model.attention_layers

    def attention_label(self, layer: int) -> str:
        return self.model.attention_label(layer)

    @property
    def supports_streaming(self) -> bool:
        """Serve's continuous batching steps the beam search of a model whose states can take
        sentences mid-search (models/base.py's StreamingStates); sampling has no such stream."""
        return self.sampling is None and self.model.supports_streaming

    def describe(self) -> dict:
        return {
            "family": self.cfg.model.type,
            "engine": "pytorch",
            "parameters": self.model.num_parameters(),
            "device": str(self.device),
            "languages": [self.cfg.data.src_lang, self.cfg.data.tgt_lang],
            "beam": self.cfg.decode.beam,
            "attention": self.attention_layers > 0,
        }

    def translate(
        self,
        lines: list[str],
        decode_cfg: DecodeConfig | None = None,
        nbest: int = 1,
        progress: bool = False,
        prefixes: list[str | None] | None = None,
        constraints: list[list[str]] | None = None,
    ) -> list[list[Translation]]:
        """Translate lines in length-sorted batches; results come back in input order.
        `prefixes`: per line, the text its translation begins with (None or "": none);
        `constraints`: per line, the phrases its translation must hold.

        A blank line yields an empty translation without running the model.
        """
        dc = decode_cfg or self.cfg.decode
        if self.sampling is None and (problem := nbest_problem(nbest, dc.beam)):
            raise UserError("--" + problem)
        steps = self.model.max_output_len
        guides = Guides.read(self.tokenizer, lines, steps, dc.beam, prefixes, constraints)
        if guides is not None and guides.phrases is not None and self.sampling is not None:
            raise UserError("--constraint needs a search: it does not go with --sampling")
        return in_batches(
            self.tokenizer, lines, self.max_source, dc, nbest, progress, self._batch, 1,
            self.prefix, guides,
        )  # fmt: skip

    def score(
        self,
        sources: list[str],
        targets: list[str],
        batch_size: int | None = None,
        progress: bool = False,
    ) -> list[Score]:
        """How likely the model finds each target given its source (decode/score.py)."""

        def run(src, tgt):
            return teacher_forced(self.model, src, tgt, self.device, self.dtype)

        limits = (self.max_source, self.model.max_output_len)
        size = batch_size or self.cfg.decode.batch_size
        return score_in_batches(
            self.tokenizer, sources, targets, limits, size, progress, run, self.prefix
        )

    def _batch(
        self, ids: list[list[int]], dc: DecodeConfig, nbest: int, guides: Guides | None = None
    ) -> list[list[Translation]]:
        src = pad_ids(ids).to(self.device)
        pre, phrases = (None, None) if guides is None else (guides.prefixes, guides.phrases)
        with torch.inference_mode(), autocast(self.device, self.dtype):
            hyps = decode(self.model, src, dc, nbest, self.sampling, None, pre, phrases)
        return [self.translations(sent) for sent in hyps]

    def translations(self, hyps) -> list[Translation]:
        """The hypotheses (search.Hypothesis) of one sentence as texts."""
        texts = self.tokenizer.decode_tgt([h.tokens for h in hyps])
        return [Translation(t, h.score, tuple(h.tokens)) for t, h in zip(texts, hyps)]

    def attention(
        self,
        line: str,
        decode_cfg: DecodeConfig | None = None,
        layer: int = -1,
        prefix: list[int] | None = None,
    ):
        """The best translation of `line` (beginning with the target ids `prefix`, if
        given), its source and target pieces, and the [target, source] attention weights of
        decoder `layer` that the same search gave while producing it (then <eos>)."""
        model = self.model
        if not model.attention_layers:
            raise UserError(f"{self.name} has no attention weights to draw")
        if not -model.attention_layers <= layer < model.attention_layers:
            n = model.attention_layers
            raise UserError(
                f"--layer {layer}: the model has {n} attention layers (0..{n - 1}, or -1)"
            )
        _, ids = source_ids(self.tokenizer, [line], self.max_source, self.prefix)
        if not ids:
            raise UserError("an empty sentence has no attention to show")
        src = pad_ids(ids).to(self.device)
        dc = decode_cfg or self.cfg.decode
        with torch.inference_mode(), autocast(self.device, self.dtype):
            pre = None if prefix is None else [prefix]
            best = decode(model, src, dc, 1, self.sampling, layer, pre)[0][0]
        pieces = self.tokenizer.src.id_to_piece
        source = [pieces(int(i)) for i in src[0]]
        target = [self.tokenizer.tgt.id_to_piece(int(t)) for t in [*best.tokens, EOS]]
        return self.translations([best])[0], source, target, best.attention.cpu().numpy()
