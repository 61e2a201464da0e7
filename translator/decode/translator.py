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
from translator.decode.rules import nbest_problem
from translator.decode.search import decode
from translator.errors import UserError
from translator.models.base import Seq2Seq
from translator.progress import progress_bar
from translator.runtime import autocast, pick_device
from translator.specials import BOS, EOS

log = logging.getLogger(__name__)


@dataclass
class Translation:
    text: str
    score: float
    tokens: tuple[int, ...] = ()  # target subword ids, without <bos>/<eos>


def source_ids(tokenizer, lines: list[str], limit: int) -> tuple[list[int], list[list[int]]]:
    """(indices of the lines that are not blank, their source subword ids); a source longer
    than `limit` subwords is cut (with a warning)."""
    todo = [i for i, line in enumerate(lines) if line.strip()]
    ids = tokenizer.encode_src([lines[i] for i in todo]) if todo else []
    for j, s in enumerate(ids):
        if len(s) > limit:  # keep the end token; the rest of the line is dropped
            log.warning(
                "line %d: %d subwords, cut to the model's limit of %d", todo[j] + 1, len(s), limit
            )
            ids[j] = s[: limit - 1] + s[-1:]
    return todo, ids


def in_batches(
    tokenizer, lines, limit: int, dc, nbest: int, progress: bool, run_batch, workers: int = 1
):
    """Translate `lines` in length-sorted batches of dc.batch_size with `run_batch(ids, dc,
    nbest)`; results come back in input order. A blank line yields an empty translation
    without running the model; a source longer than `limit` subwords is cut (with a warning).
    With `workers` > 1, that many batches run at once on threads (for an engine that releases
    the GIL, such as CTranslate2), and input that would make fewer batches is split so that
    every worker gets one."""
    results: list[list[Translation]] = [[Translation("", 0.0)] * nbest for _ in lines]
    todo, ids = source_ids(tokenizer, lines, limit)
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
        return list(run_batch([ids[j] for j in batch], dc, nbest))

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

    @property
    def supports_attention(self) -> bool:
        return bool(self.model.attention_layers)

    @property
    def supports_streaming(self) -> bool:
        """Serve's continuous batching steps the beam search; sampling has no such stream."""
        return self.sampling is None

    def describe(self) -> dict:
        return {
            "family": self.cfg.model.type,
            "engine": "pytorch",
            "parameters": self.model.num_parameters(),
            "device": str(self.device),
            "languages": [self.cfg.data.src_lang, self.cfg.data.tgt_lang],
            "beam": self.cfg.decode.beam,
            "attention": self.supports_attention,
        }

    def translate(
        self,
        lines: list[str],
        decode_cfg: DecodeConfig | None = None,
        nbest: int = 1,
        progress: bool = False,
    ) -> list[list[Translation]]:
        """Translate lines in length-sorted batches; results come back in input order.

        A blank line yields an empty translation without running the model.
        """
        dc = decode_cfg or self.cfg.decode
        if self.sampling is None and (problem := nbest_problem(nbest, dc.beam)):
            raise UserError("--" + problem)
        return in_batches(self.tokenizer, lines, self.max_source, dc, nbest, progress, self._batch)

    def _batch(self, ids: list[list[int]], dc: DecodeConfig, nbest: int) -> list[list[Translation]]:
        src = pad_ids(ids).to(self.device)
        with torch.inference_mode(), autocast(self.device, self.dtype):
            hyps = decode(self.model, src, dc, nbest, self.sampling)
        return [self.translations(sent) for sent in hyps]

    def translations(self, hyps) -> list[Translation]:
        """The hypotheses (search.Hypothesis) of one sentence as texts."""
        texts = self.tokenizer.decode_tgt([h.tokens for h in hyps])
        return [Translation(t, h.score, tuple(h.tokens)) for t, h in zip(texts, hyps)]

    def attention(self, line: str, tokens: list[int], layer: int = -1):
        """Source pieces, target pieces and the [target, source] attention weights that the
        model gives while it produces `tokens` (then <eos>) for `line`."""
        model = self.model
        if not model.attention_layers:
            raise UserError(f"{self.name} has no attention weights to draw")
        if not -model.attention_layers <= layer < model.attention_layers:
            n = model.attention_layers
            raise UserError(
                f"--layer {layer}: the model has {n} attention layers (0..{n - 1}, or -1)"
            )
        model.show_attention(layer)
        try:
            src = pad_ids(self.tokenizer.encode_src([line])).to(self.device)
            with torch.inference_mode():
                state = model.init_state(model.encode(src))
                prev, rows = BOS, []
                for token in [*tokens, EOS]:
                    _, state = model.step(torch.tensor([prev], device=self.device), state)
                    rows.append(state["attention"][0].float().cpu())
                    prev = token
        finally:
            model.show_attention(None)
        pieces = self.tokenizer.src.id_to_piece
        source = [pieces(int(i)) for i in src[0]]
        target = [self.tokenizer.tgt.id_to_piece(int(t)) for t in [*tokens, EOS]]
        return source, target, torch.stack(rows).numpy()
