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
    others = torch.arange(logp.size(-1), device=logp.device) != EOS
    return logp.masked_fill_(rows[:, None] & others, float("-inf"))


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
    """Batched beam search of width `dc.beam`; the `nbest` best hypotheses per sentence."""
    dc = dc or DecodeConfig()
    n, k, dev = src.size(0), dc.beam, src.device
    limit = max_lengths(src, dc.max_len_a, dc.max_len_b, model.max_output_len)
    rows = torch.arange(n, device=dev).repeat_interleave(k)
    state = model.reorder_state(model.init_state(model.encode(src)), rows)
    sent = torch.arange(n, device=dev)  # original index of each active sentence
    scores = torch.full((n, k), float("-inf"), device=dev)
    scores[:, 0] = 0.0  # all beams start identical: let only the first one expand
    history = torch.full((n, k, 1), BOS, dtype=torch.long, device=dev)
    prev = torch.full((n * k,), BOS, dtype=torch.long, device=dev)
    finished: list[list[Hypothesis]] = [[] for _ in range(n)]
    for t in range(int(limit.max()) + 1):  # + 1: the <eos> after full-length outputs
        m = sent.numel()
        last = limit[sent] <= t  # at the limit: this step's token is <eos>
        logits, state = model.step(prev, state)
        logp = mask_specials(torch.log_softmax(logits.float(), dim=-1), dc.allow_unk)
        force_eos(logp, last.repeat_interleave(k))
        vocab = logp.size(-1)
        cand = (scores.unsqueeze(-1) + logp.view(m, k, vocab)).view(m, k * vocab)
        top_scores, top_ids = cand.topk(2 * k, dim=-1)  # at most k of them end in <eos>
        origin, token = top_ids // vocab, top_ids % vocab
        is_eos = token == EOS
        # Finished hypotheses: <eos> among the k best candidates (all of them at the limit).
        new_len = torch.full_like(top_scores, t + 1)  # t tokens and the <eos>
        norm = top_scores / length_penalty(new_len, dc.len_penalty)
        take = is_eos & (torch.arange(2 * k, device=dev) < k) & (top_scores > float("-inf"))
        for i, j in take.nonzero().tolist():
            idx = int(sent[i])
            if len(finished[idx]) >= k:
                continue
            toks = history[i, origin[i, j]].tolist()[1:]
            finished[idx].append(Hypothesis(toks, float(norm[i, j])))
        # The k best candidates that do not end here continue.
        cont = top_scores.masked_fill(is_eos, float("-inf")).topk(k, dim=-1)
        pick = cont.indices
        scores = cont.values
        beam_origin = origin.gather(1, pick)
        next_tok = token.gather(1, pick)
        history = torch.cat(
            [history.gather(1, beam_origin[..., None].expand_as(history)), next_tok[..., None]],
            dim=2,
        )
        active = torch.tensor([len(finished[int(s)]) < k for s in sent], device=dev) & ~last
        keep = active.nonzero().squeeze(1)
        if keep.numel() == 0:
            break
        flat = (keep[:, None] * k + beam_origin[keep]).view(-1)
        state = model.reorder_state(state, flat, same_sentences=keep.numel() == sent.numel())
        scores, history, sent = scores[keep], history[keep], sent[keep]
        prev = next_tok[keep].view(-1)
    for hyps in finished:
        hyps.sort(key=lambda h: -h.score)
    return [hyps[:nbest] for hyps in finished]


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
