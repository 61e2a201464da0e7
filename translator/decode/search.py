"""Greedy and beam search over the shared model interface (see models/base.py).

Both are batched over sentences, stop each sentence at its end token or at
`max_len_a * source_length + max_len_b` tokens (then the end token is forced, and
scored, so a cut hypothesis competes as if it had ended, as in fairseq), and drop
finished sentences from the batch so the remaining steps only pay for sentences
still being decoded. Sampling (translator/decode/sampling.py) runs through greedy search's
loop with another way to pick each token.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

import torch

from translator.config import DecodeConfig
from translator.decode.beam import BeamStream
from translator.decode.constrained import constrained_beam_search
from translator.decode.rules import (
    Hypothesis,
    TargetPrefixes,
    force_eos,
    length_penalty,
    mask_specials,
    max_lengths,
    next_log_probs,
)
from translator.models.base import Seq2Seq
from translator.specials import BOS, EOS


class Sampler(Protocol):
    """How sampling picks tokens (translator/decode/sampling.py): logp [N, V] -> token ids [N]."""

    def choose(self, logp: torch.Tensor) -> torch.Tensor: ...


def _token_by_token(
    model: Seq2Seq,
    src: torch.Tensor,
    dc: DecodeConfig,
    choose: Callable,
    attention_layer: int | None = None,
    prefixes: list[list[int]] | None = None,
) -> list[list[Hypothesis]]:
    """One hypothesis per sentence, its next token picked by `choose(logp [N, V]) -> [N]`
    at every step and scored by its log-probability under the model; with `attention_layer`,
    it carries that layer's attention weights; with `prefixes`, it begins with its own."""
    n = src.size(0)
    limit = max_lengths(src, dc.max_len_a, dc.max_len_b, model.max_output_len)
    pins = TargetPrefixes(prefixes, src.device) if prefixes and any(prefixes) else None
    if pins is not None:
        limit = torch.maximum(limit, pins.lengths)
    state = model.init_state(model.encode(src))
    prev = torch.full((n,), BOS, dtype=torch.long, device=src.device)
    alive = torch.arange(n, device=src.device)
    tokens: list[list[int]] = [[] for _ in range(n)]
    scores = torch.zeros(n, device=src.device)
    seen: list[list[torch.Tensor]] = [[] for _ in range(n)]
    for t in range(int(limit.max()) + 1):  # + 1: the <eos> after a full-length output
        logp, state, weights = next_log_probs(model, prev, state, attention_layer)
        held = None if pins is None else pins.hold(logp, alive, torch.full_like(alive, t))
        logp = TargetPrefixes.force(mask_specials(logp, dc.allow_unk, model.never_output), held)
        if weights is not None:
            for row, w in zip(alive.tolist(), weights):
                seen[row].append(w)
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
    kept = [torch.stack(w) if w else None for w in seen]
    return [[Hypothesis(t, s, w)] for t, s, w in zip(tokens, scores, kept)]


@torch.no_grad()
def greedy_search(
    model: Seq2Seq,
    src: torch.Tensor,
    dc: DecodeConfig | None = None,
    attention_layer: int | None = None,
    prefixes: list[list[int]] | None = None,
) -> list[list[Hypothesis]]:
    """The likeliest next token at every step (`dc.beam` is not used)."""
    dc = dc or DecodeConfig()
    argmax = lambda logp: logp.argmax(-1)  # noqa: E731
    return _token_by_token(model, src, dc, argmax, attention_layer, prefixes)


@torch.no_grad()
def sample_search(
    model: Seq2Seq,
    src: torch.Tensor,
    dc: DecodeConfig,
    sampling: Sampler,
    nbest: int = 1,
    attention_layer: int | None = None,
    prefixes: list[list[int]] | None = None,
) -> list[list[Hypothesis]]:
    """`nbest` outputs per sentence, each token drawn by `sampling.choose`, best score first.
    All rows of the batch draw at once from one random stream, so the output is the same for
    the same input and batch, and changes with the batch (`dc.beam` is not used)."""
    n = src.size(0)
    rows = torch.arange(n, device=src.device).repeat_interleave(nbest)
    repeated = None if prefixes is None else [prefixes[i] for i in rows.tolist()]
    drawn = _token_by_token(model, src[rows], dc, sampling.choose, attention_layer, repeated)
    return [
        sorted((h[0] for h in drawn[i * nbest : (i + 1) * nbest]), key=lambda h: -h.score)
        for i in range(n)
    ]


@torch.no_grad()
def beam_search(
    model: Seq2Seq,
    src: torch.Tensor,
    dc: DecodeConfig | None = None,
    nbest: int = 1,
    attention_layer: int | None = None,
    prefixes: list[list[int]] | None = None,
) -> list[list[Hypothesis]]:
    """Batched beam search of width `dc.beam`; the `nbest` best hypotheses per sentence
    (translator/decode/beam.py: all sentences join at the first step)."""
    stream = BeamStream(model, dc or DecodeConfig(), attention_layer=attention_layer)
    stream.add(src, list(range(src.size(0))), prefixes)
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
    attention_layer: int | None = None,
    prefixes: list[list[int]] | None = None,
    phrases: list[list[list[int]]] | None = None,
) -> list[list[Hypothesis]]:
    """Sampling when asked for; else greedy search for a beam of one (the same output,
    faster), else beam search. With `attention_layer`, the searches' hypotheses carry that
    decoder layer's attention weights; with `prefixes` (target ids per sentence), each
    output begins with its sentence's prefix and the search continues from it; with
    `phrases` (target-id phrases per sentence), the constrained beam search (constrained.py)
    puts every phrase in each output."""
    if phrases is not None and any(phrases):
        if sampling is not None or attention_layer is not None:
            raise ValueError("required phrases need the constrained beam search alone")
        return constrained_beam_search(model, src, dc, phrases, nbest, prefixes)
    if sampling is not None:
        return sample_search(model, src, dc, sampling, nbest, attention_layer, prefixes)
    if dc.beam == 1 and nbest == 1:
        return greedy_search(model, src, dc, attention_layer, prefixes)
    return beam_search(model, src, dc, nbest, attention_layer, prefixes)
