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

The model runs batched over all sentences and beams, whatever their phrases; choosing the
candidates runs per sentence in Python over a few dozen numbers. Without phrases the search
gives what beam.py's gives.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from translator.config import DecodeConfig
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
class Beam:
    score: float  # log-probability so far
    tokens: list[int]
    progress: Progress


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


@torch.no_grad()
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
    n, k, dev = src.size(0), dc.beam, src.device
    limit = max_lengths(src, dc.max_len_a, dc.max_len_b, model.max_output_len)
    room = torch.tensor([sum(map(len, p)) for p in phrases], device=dev)
    pins = TargetPrefixes(prefixes, dev) if prefixes and any(prefixes) else None
    if pins is not None:
        room = room + pins.lengths
    limits = torch.maximum(limit, room).tolist()  # every phrase (and prefix) fits
    state = model.init_state(model.encode(src))
    state = model.reorder_state(state, torch.arange(n, device=dev).repeat_interleave(k))
    beams = [[Beam(0.0, [], Progress((False,) * len(p)))] for p in phrases]
    finished: list[list[tuple[bool, Hypothesis]]] = [[] for _ in range(n)]
    live = list(range(n))  # sentence live[r] holds rows r*k .. r*k + k - 1
    prev = torch.full((n * k,), BOS, dtype=torch.long, device=dev)
    t = 0
    while live:
        m = len(live)
        logp, state, _ = next_log_probs(model, prev, state, None)
        held = None
        if pins is not None:
            rows = torch.tensor(live, device=dev).repeat_interleave(k)
            held = pins.hold(logp, rows, torch.full_like(rows, t))
        logp = TargetPrefixes.force(mask_specials(logp, dc.allow_unk, model.never_output), held)
        at_limit = [t >= limits[i] for i in live]
        force_eos(logp, torch.tensor(at_limit, device=dev).repeat_interleave(k))
        base = torch.full((m, k), NEG, device=dev)
        for r, i in enumerate(live):
            for j, beam in enumerate(beams[i]):
                base[r, j] = beam.score
                if not at_limit[r] and not beam.progress.done():
                    logp[r * k + j, EOS] = NEG  # no end before every phrase is met
        vocab = logp.size(-1)
        cand = (base.unsqueeze(-1) + logp.view(m, k, vocab)).view(m, k * vocab)
        top_scores, top_ids = cand.topk(min(2 * k, k * vocab), dim=-1)
        best = logp.argmax(-1).view(m, k)
        extra: list[tuple[int, int, int]] = []  # (sentence row, beam, token)
        for r, i in enumerate(live):
            for j, beam in enumerate(beams[i]):
                extra.append((r, j, int(best[r, j])))
                extra += [(r, j, tok) for tok in beam.progress.wants(phrases[i])]
        flat = torch.tensor([(r * k + j) * vocab + tok for r, j, tok in extra], device=dev)
        extra_scores = cand.view(-1)[flat].tolist() if extra else []
        tops, ids = top_scores.tolist(), top_ids.tolist()
        pools: list[list] = [[] for _ in live]
        for (r, j, tok), s in zip(extra, extra_scores):
            pools[r].append((s, j, tok))
        new_beams, origins, tokens, still = [], [], [], []
        for r, i in enumerate(live):
            seen, pool = set(), []
            for place, (s, idx) in enumerate(zip(tops[r], ids[r])):
                j, tok = divmod(idx, vocab)
                if s == NEG or (j, tok) in seen:
                    continue
                seen.add((j, tok))
                beam = beams[i][j]
                if tok == EOS:
                    if place < k and len(finished[i]) < k:
                        length = length_penalty(len(beam.tokens) + 1, dc.len_penalty)
                        hyp = Hypothesis(beam.tokens, s / float(length))
                        finished[i].append((beam.progress.done(), hyp))
                    continue
                pool.append((s, j, tok, beam.progress.after(tok, phrases[i])))
            for s, j, tok in pools[r]:
                if s != NEG and tok != EOS and (j, tok) not in seen:
                    seen.add((j, tok))
                    pool.append((s, j, tok, beams[i][j].progress.after(tok, phrases[i])))
            if not pool and not finished[i]:  # nothing can follow: its beams end as they are
                for beam in beams[i]:
                    norm = length_penalty(len(beam.tokens) + 1, dc.len_penalty)
                    finished[i].append((beam.progress.done(), Hypothesis(beam.tokens, NEG / norm)))
            if len(finished[i]) >= k or at_limit[r] or not pool:
                continue
            chosen = allocate(pool, k, phrases[i])
            still.append(i)
            new_beams.append([Beam(s, beams[i][j].tokens + [tok], p) for s, j, tok, p in chosen])
            pad = k - len(chosen)
            origins += [r * k + j for _, j, _, _ in chosen] + [r * k + chosen[0][1]] * pad
            tokens += [tok for _, _, tok, _ in chosen] + [chosen[0][2]] * pad
        for i, b in zip(still, new_beams):
            beams[i] = b
        live, t = still, t + 1
        if live:
            state = model.reorder_state(state, torch.tensor(origins, device=dev))
            prev = torch.tensor(tokens, dtype=torch.long, device=dev)
    out = []
    for found in finished:
        ranked = sorted(found, key=lambda f: (not f[0], -f[1].score))
        out.append([h for _, h in ranked[:nbest]])
    return out
