"""Beam search over a set of sentences that may change between steps.

`BeamStream` holds the sentences being decoded, each with its own step count, length limit
and beams. `add` queues sentences; every `step` first lets queued ones join (encoded
together, their states merged into the running one with `model.merge_states`) up to
`capacity` sentences, then advances all of them by one token and hands back the sentences
that ended, with their hypotheses. A server keeps the batch full this way while sentences
of every length come and go ("continuous batching"); `search.beam_search` adds a whole
batch at once and steps until it is done, so both decode with the same code.

Per sentence the search is the one described in search.py: the `2 * beam` best candidates
of a step, of which those ending in <eos> among the first `beam` are finished hypotheses
(length-normalised), and the `beam` best that do not end continue; a sentence stops once it
has `beam` finished hypotheses or reaches its length limit (where <eos> is forced).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from typing import Any

import torch

from translator.config import DecodeConfig
from translator.models.base import Seq2Seq, pad_to
from translator.search import Hypothesis, force_eos, length_penalty, mask_specials, max_lengths
from translator.specials import BOS, EOS, PAD


class BeamStream:
    def __init__(
        self,
        model: Seq2Seq,
        dc: DecodeConfig,
        capacity: int | None = None,
        cancelled: Callable[[Any], bool] | None = None,
        regroup: int = 1,
    ):
        self.model, self.dc, self.k = model, dc, dc.beam
        self.capacity = capacity  # sentences decoded together at most (None: any number)
        # Ended sentences stay in the batch (their rows computed, unused) until this many
        # sentences could leave or join: rebuilding the batch copies every row of the state.
        self.regroup = regroup
        self.cancelled = cancelled  # owner -> True when nobody waits for it any more
        self.waiting: deque[tuple[torch.Tensor, Any]] = deque()
        self.owners: list[Any] = []  # of each sentence being decoded
        self.finished: list[list[Hypothesis]] = []
        self.state = None
        self.steps = 0  # steps taken, and the sentences they advanced (for averages)
        self.advanced = 0

    def add(self, src: torch.Tensor, owners: list[Any]) -> None:
        """Queue the sentences of `src` [n, S] (source ids, PAD-padded), one owner each."""
        self.waiting.extend(zip(src, owners))

    def __len__(self) -> int:
        """Sentences queued or being decoded."""
        return len(self.waiting) + len(self.owners) - self.owners.count(None)

    def _free(self) -> tuple[int, bool]:
        """(sentences that may join, whether to regroup the batch now: drop the ended ones
        and let queued ones join), once enough could leave or join."""
        ended = self.owners.count(None)
        live, waiting = len(self.owners) - ended, len(self.waiting)
        free = waiting if self.capacity is None else self.capacity - live
        moves = ended + min(free, waiting)
        return free, moves > 0 and moves >= min(self.regroup, live + waiting)

    def _select(self, keep: list[int], origin: torch.Tensor | None = None) -> None:
        """Keep sentences `keep`; each one's beams from rows `origin` [m, k] of its own."""
        k, m = self.k, len(self.owners)
        if not keep:
            self.state, self.owners, self.finished = None, [], []
            return
        idx = torch.tensor(keep, dtype=torch.long, device=self.scores.device)
        beams = torch.arange(k, device=idx.device).expand(len(keep), k)
        flat = (idx[:, None] * k + (beams if origin is None else origin[idx])).view(-1)
        same = len(keep) == m
        self.state = self.model.reorder_state(self.state, flat, same_sentences=same)
        if not same:
            self.owners = [self.owners[i] for i in keep]
            self.finished = [self.finished[i] for i in keep]
            self.t, self.limit, self.scores = self.t[idx], self.limit[idx], self.scores[idx]
            self.history, self.prev = self.history[idx], self.prev.view(-1, k)[idx].view(-1)
        self.history = self.history[:, :, -(int(self.t.max()) + 1) :]  # <bos>, the longest

    def _admit(self, free: int) -> None:
        rows, owners = [], []
        while self.waiting and len(rows) < free:
            row, owner = self.waiting.popleft()
            if self.cancelled is None or not self.cancelled(owner):
                rows.append(row)
                owners.append(owner)
        if not rows:
            return
        width = max(int((row != PAD).sum()) for row in rows) or 1
        src = torch.stack([pad_to(r[None, :width], (1, width))[0] for r in rows])
        model, n, k, dev = self.model, len(rows), self.k, src.device
        dc = self.dc
        state = model.init_state(model.encode(src))
        state = model.reorder_state(state, torch.arange(n, device=dev).repeat_interleave(k))
        scores = torch.full((n, k), float("-inf"), device=dev)
        scores[:, 0] = 0.0  # all beams start identical: let only the first one expand
        limit = max_lengths(src, dc.max_len_a, dc.max_len_b, model.max_output_len)
        new = {
            "t": torch.zeros(n, dtype=torch.long, device=dev),
            "limit": limit,
            "scores": scores,
            "prev": torch.full((n * k,), BOS, dtype=torch.long, device=dev),
        }
        history = torch.full((n, k, 1), BOS, dtype=torch.long, device=dev)
        if self.state is None:
            self.state, self.history = state, history
            self.t, self.limit, self.scores, self.prev = (new[x] for x in new)
        else:  # histories are aligned at their ends: a row's tokens are its last t columns
            self.state = model.merge_states([self.state, state])
            width = self.history.size(2)
            self.history = torch.cat([self.history, pad_to(history, (n, k, width), left=True)])
            self.t = torch.cat([self.t, new["t"]])
            self.limit = torch.cat([self.limit, new["limit"]])
            self.scores = torch.cat([self.scores, new["scores"]])
            self.prev = torch.cat([self.prev, new["prev"]])
        self.owners += owners
        self.finished += [[] for _ in owners]

    def step(self) -> list[tuple[Any, list[Hypothesis]]]:
        """Admit queued sentences, advance all by one token; (owner, hypotheses best first)
        of each sentence that ended."""
        free, regroup = self._free()
        if self.state is None or regroup:
            self._select([i for i, o in enumerate(self.owners) if o is not None])
            self._admit(free)
        if not self.owners:
            return []
        model, dc, k = self.model, self.dc, self.k
        m, dev = len(self.owners), self.scores.device
        self.steps, self.advanced = self.steps + 1, self.advanced + m
        last = self.limit <= self.t  # at the limit: this step's token is <eos>
        logits, state = model.step(self.prev, self.state)
        logp = mask_specials(torch.log_softmax(logits.float(), dim=-1), dc.allow_unk)
        force_eos(logp, last.repeat_interleave(k))
        vocab = logp.size(-1)
        cand = (self.scores.unsqueeze(-1) + logp.view(m, k, vocab)).view(m, k * vocab)
        top_scores, top_ids = cand.topk(2 * k, dim=-1)  # at most k of them end in <eos>
        origin, token = top_ids // vocab, top_ids % vocab
        is_eos = token == EOS
        # Finished hypotheses: <eos> among the k best candidates (all of them at the limit).
        new_len = (self.t + 1)[:, None].to(top_scores.dtype)  # t tokens and the <eos>
        norm = top_scores / length_penalty(new_len, dc.len_penalty)
        take = is_eos & (torch.arange(2 * k, device=dev) < k) & (top_scores > float("-inf"))
        width, steps, limits = self.history.size(2), self.t.tolist(), self.limit.tolist()
        for i, j in take.nonzero().tolist():
            if self.owners[i] is None or len(self.finished[i]) >= k:
                continue
            toks = self.history[i, origin[i, j]].tolist()[width - steps[i] :]
            self.finished[i].append(Hypothesis(toks, float(norm[i, j])))
        # The k best candidates that do not end here continue.
        cont = top_scores.masked_fill(is_eos, float("-inf")).topk(k, dim=-1)
        beam_origin = origin.gather(1, cont.indices)
        next_tok = token.gather(1, cont.indices)
        history = self.history.gather(1, beam_origin[..., None].expand_as(self.history))
        history = torch.cat([history, next_tok[..., None]], dim=2)
        ended = []
        for i, (owner, found) in enumerate(zip(self.owners, self.finished)):
            if owner is None:
                continue
            stop = len(found) >= k or (self.cancelled is not None and self.cancelled(owner))
            if stop or steps[i] >= limits[i]:
                ended.append((owner, sorted(found, key=lambda h: -h.score)))
                self.owners[i] = None  # its rows go at the next regrouping
        self.state, self.scores = state, cont.values
        self.t, self.prev, self.history = self.t + 1, next_tok.view(-1), history
        free, regroup = self._free()
        everyone = range(m)
        self._select(
            [i for i in everyone if self.owners[i] is not None] if regroup else everyone,
            beam_origin,
        )
        if regroup:
            self._admit(free)
        return ended
