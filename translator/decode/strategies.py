"""What survives a step of the search loop (loop.py), one strategy per kind of search.

`Greedy` keeps one hypothesis per sentence and extends it with its likeliest token;
`Sampled` draws that token instead (sampling.py's `choose`). Both score a hypothesis by
its log-probability under the model and let a sentence leave the batch at its <eos>.
`Beam` chooses among a sentence's `k` beams: of the `2 * k` best candidates, those ending
in <eos> among the first `k` finish (length-normalised) and the `k` best that do not end
continue; BeamStream (beam.py) keeps the hypotheses it chooses. The constrained beam
search's strategy is constrained.py's `ConstrainedBeam`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import torch

from translator.config import DecodeConfig
from translator.decode.rules import Hypothesis, length_penalty
from translator.specials import EOS


def candidates(scores: torch.Tensor, logp: torch.Tensor, in_place: bool = False) -> torch.Tensor:
    """Every continuation's score [m, k * V]: beam scores [m, k] plus the step's
    log-probabilities [m * k, V], beam by beam; `in_place` adds them into `logp` (a caller
    done with it saves a fresh [m * k, V] tensor a step)."""
    m, k = scores.shape
    vocab = logp.size(-1)
    if in_place:
        return logp.view(m, k, vocab).add_(scores.unsqueeze(-1)).view(m, k * vocab)
    return (scores.unsqueeze(-1) + logp.view(m, k, vocab)).view(m, k * vocab)


class Greedy:
    """The likeliest next token of each sentence's one hypothesis, with `attention` kept
    where the loop passes a layer's weights."""

    width = None  # one row per sentence

    def room(self, n: int, device: torch.device) -> None:
        return None

    def start(self, n: int, dc: DecodeConfig, device: torch.device) -> None:
        self.alpha, self.norm, self.device = dc.len_penalty, dc.len_norm, device
        self.tokens: list[list[int]] = [[] for _ in range(n)]
        self.scores = torch.zeros(n, device=device)
        self.seen: list[list[torch.Tensor]] = [[] for _ in range(n)]
        self.logprobs: list[list[float]] = [[] for _ in range(n)]

    def choose(self, logp: torch.Tensor) -> torch.Tensor:
        return logp.argmax(-1)

    def select(self, logp: torch.Tensor, weights, live: torch.Tensor, t: int, last):
        if weights is not None:
            for row, w in zip(live.tolist(), weights):
                self.seen[row].append(w)
        prev = self.choose(logp)
        taken = logp.gather(1, prev[:, None]).squeeze(1)
        self.scores[live] += taken
        done = prev == EOS
        for row, tok, lp in zip(live.tolist(), prev.tolist(), taken.tolist()):
            self.logprobs[row].append(lp)
            if tok != EOS:
                self.tokens[row].append(tok)
        if bool(done.all()):
            return None
        if bool(done.any()):
            keep = (~done).nonzero().squeeze(1)
            return live[keep], keep, prev[keep]
        return live, None, prev

    def results(self) -> list[list[Hypothesis]]:
        lengths = torch.tensor([len(t) + 1 for t in self.tokens], device=self.device)  # <eos>
        scores = (self.scores / length_penalty(lengths, self.alpha, self.norm)).tolist()
        kept = [torch.stack(w) if w else None for w in self.seen]
        return [
            [Hypothesis(t, s, w, lp)]
            for t, s, w, lp in zip(self.tokens, scores, kept, self.logprobs)
        ]


class Sampled(Greedy):
    """Each next token drawn by `draw(logp [N, V]) -> [N]` (sampling.py's Sampling.choose)."""

    def __init__(self, draw: Callable[[torch.Tensor], torch.Tensor]):
        self.draw = draw

    def choose(self, logp: torch.Tensor) -> torch.Tensor:
        return self.draw(logp)


@dataclass
class BeamChoice:
    """One step of `Beam` over m sentences: candidates [m, 2k] by (sentence, rank)."""

    origin: torch.Tensor  # the beam each candidate extends
    norm: torch.Tensor  # its length-normalised score, for those that finish
    finish: torch.Tensor  # bool: it ends in <eos> among the k best
    beams: torch.Tensor  # [m, k]: the beams the continuing candidates extend
    tokens: torch.Tensor  # [m, k]: their tokens
    scores: torch.Tensor  # [m, k]: their scores
    raw: torch.Tensor  # [m, 2k]: every candidate's score before length normalisation


class Beam:
    """Beam search of width `k` with length penalty `alpha` of normalisation `norm`
    (rules.length_penalty; module docstring)."""

    def __init__(self, k: int, alpha: float, norm: str = "gnmt"):
        self.k, self.alpha, self.norm = k, alpha, norm

    def select(self, scores: torch.Tensor, logp: torch.Tensor, t: torch.Tensor) -> BeamChoice:
        """Beam scores [m, k], the step's log-probabilities [m * k, V] and each sentence's
        tokens so far [m]: what finishes and what continues."""
        k, vocab = self.k, logp.size(-1)
        # <= k of them end in <eos>; logp is the step's own, used by nothing after
        top_scores, top_ids = candidates(scores, logp, in_place=True).topk(2 * k, dim=-1)
        origin, token = top_ids // vocab, top_ids % vocab
        is_eos = token == EOS
        new_len = (t + 1)[:, None].to(top_scores.dtype)  # t tokens and the <eos>
        norm = top_scores / length_penalty(new_len, self.alpha, self.norm)
        ranks = torch.arange(2 * k, device=scores.device)
        finish = is_eos & (ranks < k) & (top_scores > float("-inf"))
        cont = top_scores.masked_fill(is_eos, float("-inf")).topk(k, dim=-1)
        beams, tokens = origin.gather(1, cont.indices), token.gather(1, cont.indices)
        return BeamChoice(origin, norm, finish, beams, tokens, cont.values, top_scores)
