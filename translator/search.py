"""Greedy and beam search over the shared model interface (see models/base.py).

Both are batched over sentences, stop each sentence at its end token or at
`max_len_a * source_length + max_len_b` tokens (then the end token is forced, and
scored, so a cut hypothesis competes as if it had ended, as in fairseq), and drop
finished sentences from the batch so the remaining steps only pay for sentences
still being decoded. Sampling (translator/sampling.py) runs through greedy search's
loop with another way to pick each token.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

import torch

from translator.config import DecodeConfig
from translator.models.base import Seq2Seq
from translator.specials import BOS, EOS, PAD, UNK


class Sampler(Protocol):
    """How sampling picks tokens (translator/sampling.py): logp [N, V] -> token ids [N]."""

    def choose(self, logp: torch.Tensor) -> torch.Tensor: ...


@dataclass
class Hypothesis:
    tokens: list[int]  # without <bos>/<eos>
    score: float  # length-normalised log-probability


def max_lengths(src: torch.Tensor, a: float, b: int, steps: int | None = None) -> torch.Tensor:
    """Output tokens allowed per sentence, <eos> not counted; `steps` (the decoder steps the
    model can take) keeps one step for the <eos>."""
    src_len = (src != PAD).sum(1)
    return (a * src_len.float() + b).long().clamp(min=1, max=None if steps is None else steps - 1)


def mask_specials(logp: torch.Tensor, allow_unk: bool) -> torch.Tensor:
    """<pad> and <bos> never appear in an output, and <unk> only on request: the detokenizer
    drops them, so a hypothesis would be ranked on tokens its text does not show."""
    banned = [PAD, BOS] if allow_unk else [PAD, BOS, UNK]
    logp[:, banned] = float("-inf")
    return logp


def force_eos(logp: torch.Tensor, rows: torch.Tensor) -> torch.Tensor:
    """Rows at their length limit can only end: every token but <eos> gets -inf."""
    at = rows.nonzero().squeeze(1)
    if at.numel():  # (most steps have none: a [N, V] mask would cost more than the rest)
        end = logp[at, EOS]
        logp[at] = float("-inf")
        logp[at, EOS] = end
    return logp


def length_penalty(length, alpha: float):
    """GNMT's ((5 + |Y|) / 6) ** alpha (Wu et al. 2016), of a tensor of lengths or one."""
    return ((5.0 + length) / 6.0) ** alpha


def _token_by_token(
    model: Seq2Seq, src: torch.Tensor, dc: DecodeConfig, choose: Callable
) -> list[list[Hypothesis]]:
    """One hypothesis per sentence, its next token picked by `choose(logp [N, V]) -> [N]`
    at every step and scored by its log-probability under the model."""
    n = src.size(0)
    limit = max_lengths(src, dc.max_len_a, dc.max_len_b, model.max_output_len)
    state = model.init_state(model.encode(src))
    prev = torch.full((n,), BOS, dtype=torch.long, device=src.device)
    alive = torch.arange(n, device=src.device)
    tokens: list[list[int]] = [[] for _ in range(n)]
    scores = torch.zeros(n, device=src.device)
    for t in range(int(limit.max()) + 1):  # + 1: the <eos> after a full-length output
        logits, state = model.step(prev, state)
        logp = mask_specials(torch.log_softmax(logits.float(), dim=-1), dc.allow_unk)
        prev = choose(force_eos(logp, limit[alive] <= t))
        scores[alive] += logp.gather(1, prev[:, None]).squeeze(1)
        done = prev == EOS
        for row, tok in zip(alive.tolist(), prev.tolist()):
            if tok != EOS:
                tokens[row].append(tok)
        if bool(done.all()):
            break
        if bool(done.any()):
            keep = (~done).nonzero().squeeze(1)
            state, prev, alive = model.reorder_state(state, keep), prev[keep], alive[keep]
    lengths = torch.tensor([len(t) + 1 for t in tokens], device=src.device)  # with <eos>
    scores = (scores / length_penalty(lengths, dc.len_penalty)).tolist()
    return [[Hypothesis(t, s)] for t, s in zip(tokens, scores)]


@torch.no_grad()
def greedy_search(
    model: Seq2Seq, src: torch.Tensor, dc: DecodeConfig | None = None
) -> list[list[Hypothesis]]:
    """The likeliest next token at every step (`dc.beam` is not used)."""
    return _token_by_token(model, src, dc or DecodeConfig(), lambda logp: logp.argmax(-1))


@torch.no_grad()
def sample_search(
    model: Seq2Seq, src: torch.Tensor, dc: DecodeConfig, sampling: Sampler, nbest: int = 1
) -> list[list[Hypothesis]]:
    """`nbest` outputs per sentence, each token drawn by `sampling.choose`, best score first.
    All rows of the batch draw at once from one random stream, so the output is the same for
    the same input and batch, and changes with the batch (`dc.beam` is not used)."""
    n = src.size(0)
    rows = torch.arange(n, device=src.device).repeat_interleave(nbest)
    drawn = _token_by_token(model, src[rows], dc, sampling.choose)
    return [
        sorted((h[0] for h in drawn[i * nbest : (i + 1) * nbest]), key=lambda h: -h.score)
        for i in range(n)
    ]


@torch.no_grad()
def beam_search(
    model: Seq2Seq, src: torch.Tensor, dc: DecodeConfig | None = None, nbest: int = 1
) -> list[list[Hypothesis]]:
    """Batched beam search of width `dc.beam`; the `nbest` best hypotheses per sentence
    (translator/beam.py: all sentences join at the first step)."""
    from translator.beam import BeamStream  # it imports this module's helpers

    stream = BeamStream(model, dc or DecodeConfig())
    stream.add(src, list(range(src.size(0))))
    out: list[list[Hypothesis]] = [[] for _ in range(src.size(0))]
    while len(stream):
        for i, hyps in stream.step():
            out[i] = hyps[:nbest]
    return out


def decode(
    model: Seq2Seq,
    src: torch.Tensor,
    dc: DecodeConfig,
    nbest: int = 1,
    sampling: Sampler | None = None,
) -> list[list[Hypothesis]]:
    """Sampling when asked for; else greedy search for a beam of one (the same output,
    faster), else beam search."""
    if sampling is not None:
        return sample_search(model, src, dc, sampling, nbest)
    if dc.beam == 1 and nbest == 1:
        return greedy_search(model, src, dc)
    return beam_search(model, src, dc, nbest)
