"""Lexically constrained beam search: every required phrase appears in the output, in any
order (dynamic beam allocation, Post & Vilar 2018).

Each hypothesis knows how far it has come through its sentence's phrases (`Progress`): the
phrases it has written whole and the one it is writing. Its bank is the number of phrase
tokens met so far. At every step the candidates are the search's usual ones (the 2k best
continuations), each beam's best next token, and each beam's next token of a phrase; the
k continuing beams are then taken from the banks in turn, best first within a bank, from the
fullest bank down, so hypotheses that have met more of the phrases are not crowded out by
likelier ones that have met fewer. A hypothesis ends (<eos>) only once it has met every
phrase, or at its length limit, which leaves room for all of them. A phrase left half
written is started again.

`ConstrainedBeam` is this choice as a strategy of the search loop (loop.py), which owns the
limits, prefixes, masks and reordering: the model runs batched over all sentences and beams,
whatever their phrases; choosing the candidates runs per sentence in Python over a few dozen
numbers. Without phrases the search gives what beam.py's gives.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from translator.config import DecodeConfig
from translator.decode.loop import search
from translator.decode.rules import Hypothesis, length_penalty
from translator.decode.strategies import candidates
from translator.models.base import Seq2Seq
from translator.specials import EOS

NEG = float("-inf")


@dataclass(frozen=True)
class Progress:
    """A hypothesis's place among its sentence's phrases."""

    met: tuple[bool, ...]
    active: int | None = None  # the phrase being written
    pos: int = 0  # its tokens written so far

    def bank(self, phrases: list[list[int]]) -> int:
        return sum(len(p) for p, done in zip(phrases, self.met) if done) + self.pos

    def done(self) -> bool:
        return all(self.met) and self.active is None

    def wants(self, phrases: list[list[int]]) -> list[int]:
        """The tokens that would bring it further."""
        if self.active is not None:
            return [phrases[self.active][self.pos]]
        return list({p[0] for p, done in zip(phrases, self.met) if not done})

    def after(self, token: int, phrases: list[list[int]]) -> Progress:
        if self.active is not None:
            phrase = phrases[self.active]
            if token != phrase[self.pos]:  # broken off: this token may begin a phrase anew
                return Progress(self.met).after(token, phrases)
            if self.pos + 1 < len(phrase):
                return Progress(self.met, self.active, self.pos + 1)
            return Progress(tuple(d or j == self.active for j, d in enumerate(self.met)))
        for j, (phrase, done) in enumerate(zip(phrases, self.met)):
            if not done and token == phrase[0]:
                if len(phrase) == 1:
                    return Progress(tuple(d or i == j for i, d in enumerate(self.met)))
                return Progress(self.met, j, 1)
        return self


@dataclass
class Live:
    """A hypothesis still being extended."""

    score: float  # log-probability so far
    tokens: list[int]
    progress: Progress
    logprobs: tuple[float, ...] = ()  # each token's

    def then(self, score: float, token: int, progress: Progress) -> Live:
        """This hypothesis extended by `token`, its score then `score`."""
        step = score - self.score
        return Live(score, [*self.tokens, token], progress, (*self.logprobs, step))


def allocate(pool: list[tuple[float, int, int, Progress]], k: int, phrases) -> list:
    """The k continuing candidates (score, beam, token, progress): the banks in turn from the
    fullest down, best first within each."""
    banks: dict[int, list] = {}
    for cand in sorted(pool, key=lambda c: -c[0]):
        banks.setdefault(cand[3].bank(phrases), []).append(cand)
    order = [banks[b] for b in sorted(banks, reverse=True)]
    chosen, depth = [], 0
    while len(chosen) < k and any(depth < len(b) for b in order):
        chosen += [b[depth] for b in order if depth < len(b)][: k - len(chosen)]
        depth += 1
    return sorted(chosen, key=lambda c: -c[0])


class ConstrainedBeam:
    """The search loop's strategy (loop.py) for sentence i's outputs to hold every phrase of
    phrases[i], with `k` beams per sentence (module docstring)."""

    def __init__(self, phrases: list[list[list[int]]], k: int):
        self.phrases, self.width = phrases, k

    def room(self, n: int, device: torch.device) -> torch.Tensor:
        return torch.tensor([sum(map(len, p)) for p in self.phrases], device=device)

    def start(self, n: int, dc: DecodeConfig, device: torch.device) -> None:
        self.alpha, self.norm, self.device = dc.len_penalty, dc.len_norm, device
        self.beams = [[Live(0.0, [], Progress((False,) * len(p)))] for p in self.phrases]
        # (holds every phrase, hypothesis) per sentence
        self.finished: list[list[tuple[bool, Hypothesis]]] = [[] for _ in range(n)]

    def select(self, logp: torch.Tensor, weights, live: torch.Tensor, t: int, last):
        k, lives = self.width, live.tolist()
        m = len(lives)
        at_limit = last.view(m, k)[:, 0].tolist()
        base = torch.full((m, k), NEG, device=self.device)
        for r, i in enumerate(lives):
            for j, beam in enumerate(self.beams[i]):
                base[r, j] = beam.score
                if not at_limit[r] and not beam.progress.done():
                    logp[r * k + j, EOS] = NEG  # no end before every phrase is met
        vocab = logp.size(-1)
        cand = candidates(base, logp)
        top_scores, top_ids = cand.topk(min(2 * k, k * vocab), dim=-1)
        extras = self._extras(cand, logp, lives)
        tops, ids = top_scores.tolist(), top_ids.tolist()
        origins, tokens, still = [], [], []
        for r, i in enumerate(lives):
            pool = self._pool(i, tops[r], ids[r], vocab, extras[r])
            if len(self.finished[i]) >= k or at_limit[r] or not pool:
                continue
            chosen = allocate(pool, k, self.phrases[i])
            still.append(i)
            self.beams[i] = [self.beams[i][j].then(s, tok, p) for s, j, tok, p in chosen]
            pad = k - len(chosen)
            origins += [r * k + j for _, j, _, _ in chosen] + [r * k + chosen[0][1]] * pad
            tokens += [tok for _, _, tok, _ in chosen] + [chosen[0][2]] * pad
        if not still:
            return None
        dev = self.device
        return (
            torch.tensor(still, device=dev),
            torch.tensor(origins, device=dev),
            torch.tensor(tokens, dtype=torch.long, device=dev),
        )

    def _extras(self, cand: torch.Tensor, logp: torch.Tensor, lives: list[int]) -> list[list]:
        """Per sentence, (score, beam, token) of each beam's best next token and of each
        next token of a phrase that would bring it further."""
        k, vocab = self.width, logp.size(-1)
        # <eos> aside: a beam that has met every phrase and would end, but not among the k
        # best, goes on with its best other token rather than leave the pool (and be lost)
        best = logp.index_fill(1, torch.tensor([EOS], device=logp.device), NEG).argmax(-1)
        best = best.view(len(lives), k)
        extra: list[tuple[int, int, int]] = []  # (sentence row, beam, token)
        for r, i in enumerate(lives):
            for j, beam in enumerate(self.beams[i]):
                extra.append((r, j, int(best[r, j])))
                extra += [(r, j, tok) for tok in beam.progress.wants(self.phrases[i])]
        flat = torch.tensor([(r * k + j) * vocab + tok for r, j, tok in extra], device=self.device)
        scores = cand.view(-1)[flat].tolist() if extra else []
        pools: list[list] = [[] for _ in lives]
        for (r, j, tok), s in zip(extra, scores):
            pools[r].append((s, j, tok))
        return pools

    def _pool(self, i: int, tops: list, ids: list, vocab: int, extras: list) -> list:
        """Sentence i's continuing candidates (score, beam, token, progress), its top
        candidates first, then `extras`; the top ones ending in <eos> finish instead."""
        beams, phrases, finished, k = self.beams[i], self.phrases[i], self.finished[i], self.width
        seen, pool = set(), []
        for place, (s, idx) in enumerate(zip(tops, ids)):
            j, tok = divmod(idx, vocab)
            if s == NEG or (j, tok) in seen:
                continue
            seen.add((j, tok))
            beam = beams[j]
            if tok == EOS:
                if place < k and len(finished) < k:
                    length = length_penalty(len(beam.tokens) + 1, self.alpha, self.norm)
                    logprobs = [*beam.logprobs, s - beam.score]
                    hyp = Hypothesis(beam.tokens, s / float(length), None, logprobs)
                    finished.append((beam.progress.done(), hyp))
                continue
            pool.append((s, j, tok, beam.progress.after(tok, phrases)))
        for s, j, tok in extras:
            if s != NEG and tok != EOS and (j, tok) not in seen:
                seen.add((j, tok))
                pool.append((s, j, tok, beams[j].progress.after(tok, phrases)))
        if not pool and not finished:  # nothing can follow: its beams end as they are
            for beam in beams:
                norm = length_penalty(len(beam.tokens) + 1, self.alpha, self.norm)
                finished.append((beam.progress.done(), Hypothesis(beam.tokens, NEG / norm)))
        return pool

    def results(self) -> list[list[Hypothesis]]:
        """Those that hold every phrase, best first; where none does (the length limit came
        first), the best of the others alone, so that an n-best list never mixes the two."""
        out = []
        for found in self.finished:
            ranked = sorted(found, key=lambda h: (not h[0], -h[1].score))
            holding = [h for held, h in ranked if held]
            out.append(holding or [h for _, h in ranked[:1]])
        return out


def constrained_beam_search(
    model: Seq2Seq,
    src: torch.Tensor,
    dc: DecodeConfig,
    phrases: list[list[list[int]]],
    nbest: int = 1,
    prefixes: list[list[int]] | None = None,
) -> list[list[Hypothesis]]:
    """Beam search of width dc.beam in which sentence i's outputs hold every target-id
    phrase of phrases[i] (module docstring); the nbest best per sentence, those that hold
    them all first."""
    found = search(model, src, dc, ConstrainedBeam(phrases, dc.beam), None, prefixes)
    return [hyps[:nbest] for hyps in found]
