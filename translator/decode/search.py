"""The searches the rest of the code calls, over the shared model interface (see
models/base.py): greedy search, sampling, beam search, and `decode`, which picks one.

Each is the search loop of loop.py with a strategy that chooses what survives a step
(strategies.py): greedy search and sampling run `loop.search` with `Greedy` and `Sampled`,
the constrained beam search with constrained.py's `ConstrainedBeam`, and beam search steps a
`BeamStream` (beam.py), `Beam`'s driver over sentences that may join between steps. All stop
a sentence at its end token or at `max_len_a * source_length + max_len_b` tokens (then the
end token is forced, and scored, so a cut hypothesis competes as if it had ended, as in
fairseq), and drop finished sentences from the batch so the remaining steps only pay for
sentences still being decoded.
"""

from __future__ import annotations

from typing import Protocol

import torch

from translator.config import DecodeConfig
from translator.decode.beam import BeamStream
from translator.decode.constrained import constrained_beam_search
from translator.decode.loop import abandoned, search, stop_if
from translator.decode.rules import Hypothesis
from translator.decode.strategies import Greedy, Sampled
from translator.models.base import Seq2Seq


class Sampler(Protocol):
    """How sampling picks tokens (translator/decode/sampling.py): logp [N, V] -> token ids [N]."""

    def choose(self, logp: torch.Tensor) -> torch.Tensor: ...


@torch.no_grad()
def greedy_search(
    model: Seq2Seq,
    src: torch.Tensor,
    dc: DecodeConfig | None = None,
    attention_layer: int | None = None,
    prefixes: list[list[int]] | None = None,
) -> list[list[Hypothesis]]:
    """The likeliest next token at every step (`dc.beam` is not used)."""
    return search(model, src, dc or DecodeConfig(), Greedy(), attention_layer, prefixes)


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
    drawn = search(model, src[rows], dc, Sampled(sampling.choose), attention_layer, repeated)
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
    check = abandoned()
    while len(stream):
        stop_if(check)
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
