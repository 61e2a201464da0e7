"""Beam search over a set of sentences that may change between steps.

`BeamStream` holds the sentences being decoded, each with its own step count, length limit
and beams. `add` queues sentences; every `step` first lets queued ones join, up to
`capacity` sentences (encoded together; their states take the rows of sentences that ended,
`model.place_states`, or are added to the running state, `model.merge_states`: a model
whose `supports_streaming` declares models/base.py's StreamingStates), then advances all of
them by one token and hands back the sentences that ended, with their hypotheses. A server
keeps the batch full this way while sentences of every length come and go ("continuous
batching"); `search.beam_search` adds a whole batch at once and steps until it is done, so
both decode with the same code, and a model without StreamingStates runs the latter.

Each step is the search loop's (loop.py: `begin` sets joining sentences up, `step_log_probs`
applies the rules) with strategies.py's `Beam` choosing: the `2 * beam` best candidates of a
step, of which those ending in <eos> among the first `beam` are finished hypotheses
(length-normalised), and the `beam` best that do not end continue. The stream keeps the
hypotheses and their histories; a sentence stops once it has `beam` finished hypotheses or
reaches its length limit (where <eos> is forced).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from typing import Any, cast

import torch

from translator.config import DecodeConfig
from translator.decode.loop import begin, step_log_probs
from translator.decode.rules import Hypothesis, TargetPrefixes
from translator.decode.strategies import Beam
from translator.models.base import Seq2Seq, StreamingStates, pad_to, select_rows
from translator.specials import BOS, PAD


class BeamStream:
    def __init__(
        self,
        model: Seq2Seq,
        dc: DecodeConfig,
        capacity: int | None = None,
        cancelled: Callable[[Any], bool] | None = None,
        regroup: int = 1,
        attention_layer: int | None = None,
    ):
        self.model, self.dc, self.k = model, dc, dc.beam
        self.beam = Beam(dc.beam, dc.len_penalty, dc.len_norm)  # what survives each step
        self.capacity = capacity  # sentences decoded together at most (None: any number)
        # Hypotheses carry this decoder layer's attention weights (sentences start together).
        self.attention_layer = attention_layer
        self.seen: torch.Tensor | None = None  # [m, k, t, S]: each beam's weights so far
        if capacity is not None:  # sentences over capacity join later
            self._check_join()
        # Ended sentences leave the batch once this many have and none waits to take their
        # rows: leaving copies every row of the state, taking a row writes only that row.
        self.regroup = regroup
        self.cancelled = cancelled  # owner -> True when nobody waits for it any more
        self.waiting: deque[tuple[torch.Tensor, Any, list[int]]] = deque()
        # each sentence's target prefix (translate --prefix); empty ones force nothing
        self.pins: TargetPrefixes | None = None
        self.pinning = False  # whether any sentence that joined had a prefix
        self.owners: list[Any] = []  # of each sentence being decoded
        self.finished: list[list[Hypothesis]] = []
        self.state = None
        self.steps = 0  # steps taken, and the sentences they advanced (for averages; rows of
        # ended sentences not counted)
        self.advanced = 0

    def add(
        self, src: torch.Tensor, owners: list[Any], prefixes: list[list[int]] | None = None
    ) -> None:
        """Queue the sentences of `src` [n, S] (source ids, PAD-padded), one owner each, and
        the target ids each output must begin with (none by default)."""
        if self.state is not None:
            self._check_join()
        self.waiting.extend(zip(src, owners, prefixes or [[] for _ in owners]))

    def _check_join(self) -> None:
        """Sentences may join a running search: the model has StreamingStates, and no
        attention is being kept (its beams' weights would need the same joins)."""
        if not self.model.supports_streaming:
            raise ValueError(
                f"{type(self.model).__name__} has no StreamingStates: sentences cannot join "
                "a running search"
            )
        if self.attention_layer is not None:
            raise ValueError("a search that keeps attention takes its sentences at the start")

    def __len__(self) -> int:
        """Sentences queued or being decoded."""
        return len(self.waiting) + len(self.owners) - self.owners.count(None)

    def _room(self) -> int:
        """Sentences that may join now: into the rows of ended ones, and up to `capacity`."""
        ended = self.owners.count(None)
        more = len(self.waiting) if self.capacity is None else self.capacity - len(self.owners)
        return ended + max(more, 0)

    def _select(self, keep: list[int] | range, origin: torch.Tensor) -> None:
        """Keep sentences `keep`; each one's beams from rows `origin` [m, k] of its own."""
        k, m = self.k, len(self.owners)
        if not keep:
            self.state, self.owners, self.finished = None, [], []
            return
        idx = torch.tensor(keep, dtype=torch.long, device=self.scores.device)
        flat = (idx[:, None] * k + origin[idx]).view(-1)
        same = len(keep) == m
        self.state = self.model.reorder_state(self.state, flat, same_sentences=same)
        if not same:
            self.owners = [self.owners[i] for i in keep]
            self.finished = [self.finished[i] for i in keep]
            self.t, self.limit, self.scores = self.t[idx], self.limit[idx], self.scores[idx]
            self.history, self.prev = self.history[idx], self.prev.view(-1, k)[idx].view(-1)
            self.logprobs = self.logprobs[idx]
            self.seen = None if self.seen is None else self.seen[idx]
            self.pins = self.pins.take(idx)
        width = int(self.t.max()) + 1  # <bos>, the longest
        self.history, self.logprobs = self.history[:, :, -width:], self.logprobs[:, :, -width:]

    def _admit(self) -> None:
        """Queued sentences join: first into the rows of ended sentences (written in place,
        `model.place_states`), then as new rows (`model.merge_states`, a copy of all)."""
        rows, owners, prefixes, room = [], [], [], self._room()
        while self.waiting and len(rows) < room:
            row, owner, prefix = self.waiting.popleft()
            if self.cancelled is None or not self.cancelled(owner):
                rows.append(row)
                owners.append(owner)
                prefixes.append(prefix)
        if not rows:
            return
        width = max(int((row != PAD).sum()) for row in rows) or 1
        src = torch.stack([pad_to(r[None, :width], (1, width))[0] for r in rows])
        model, n, k, dev = self.model, len(rows), self.k, src.device
        start = begin(model, src, self.dc, prefixes, k)
        state, limit, pins = start.state, start.limit, start.pins
        scores = torch.full((n, k), float("-inf"), device=dev)
        scores[:, 0] = 0.0  # all beams start identical: let only the first one expand
        self.pinning = self.pinning or start.pinning
        history = torch.full((n, k, 1), BOS, dtype=torch.long, device=dev)
        logprobs = torch.zeros((n, k, 1), device=dev)  # each history token's, aligned with it
        if self.state is None:
            if self.attention_layer is not None:
                self.seen = torch.zeros((n, k, 0, src.size(1)), device=dev)
            self.state, self.history, self.scores, self.limit = state, history, scores, limit
            self.logprobs = logprobs
            self.pins = pins
            self.t = torch.zeros(n, dtype=torch.long, device=dev)
            self.prev = torch.full((n * k,), BOS, dtype=torch.long, device=dev)
            self.owners, self.finished = owners, [[] for _ in owners]
            return
        ended = [i for i, o in enumerate(self.owners) if o is None][:n]
        if ended:  # histories are aligned at their ends: a row's tokens are its last t columns
            fill = len(ended)
            slots = torch.tensor(ended, dtype=torch.long, device=dev)
            beams = (slots[:, None] * k + torch.arange(k, device=dev)).view(-1)
            part = state if fill == n else select_rows(state, torch.arange(fill * k, device=dev))
            self.state = cast(StreamingStates, model).place_states(self.state, beams, part)
            self.t[slots], self.limit[slots], self.scores[slots] = 0, limit[:fill], scores[:fill]
            self.pins.place(slots, pins.take(torch.arange(fill, device=dev)))
            self.prev[beams] = BOS
            self.history[slots] = PAD
            self.history[slots, :, -1] = BOS
            self.logprobs[slots] = 0.0
            for i, owner in zip(ended, owners):
                self.owners[i], self.finished[i] = owner, []
        fill = len(ended)
        if fill == n:
            return
        rest = torch.arange(fill * k, n * k, device=dev)
        joining = select_rows(state, rest) if fill else state
        self.state = cast(StreamingStates, model).merge_states([self.state, joining])
        width = self.history.size(2)
        self.history = torch.cat(
            [self.history, pad_to(history[fill:], (n - fill, k, width), left=True)]
        )
        self.logprobs = torch.cat(
            [self.logprobs, pad_to(logprobs[fill:], (n - fill, k, width), left=True)]
        )
        self.t = torch.cat([self.t, torch.zeros(n - fill, dtype=torch.long, device=dev)])
        self.limit = torch.cat([self.limit, limit[fill:]])
        self.scores = torch.cat([self.scores, scores[fill:]])
        self.pins = TargetPrefixes.joined([self.pins, pins.take(torch.arange(fill, n, device=dev))])
        self.prev = torch.cat([self.prev, torch.full(((n - fill) * k,), BOS, device=dev)])
        self.owners += owners[fill:]
        self.finished += [[] for _ in owners[fill:]]

    def step(self) -> list[tuple[Any, list[Hypothesis]]]:
        """Admit queued sentences, advance all by one token; (owner, hypotheses best first)
        of each sentence that ended."""
        if self.waiting:
            self._admit()
        if not self.owners:
            return []
        k, m, dev = self.k, len(self.owners), self.scores.device
        self.steps, self.advanced = self.steps + 1, self.advanced + m - self.owners.count(None)
        last = (self.limit <= self.t).repeat_interleave(k)  # at the limit: the token is <eos>
        pinned = None
        if self.pinning and self.pins is not None:
            rows = torch.arange(m, device=dev).repeat_interleave(k)
            pinned = (self.pins, rows, self.t.repeat_interleave(k))
        logp, state, weights = step_log_probs(
            self.model, self.dc, self.prev, self.state, last, self.attention_layer, pinned
        )
        choice = self.beam.select(self.scores, logp, self.t)
        seen = None  # every beam's weights with this step's
        if self.seen is not None and weights is not None:
            seen = torch.cat([self.seen, weights.view(m, k, 1, -1)], 2)
        # Finished hypotheses: <eos> among the k best candidates (all of them at the limit).
        width, steps, limits = self.history.size(2), self.t.tolist(), self.limit.tolist()
        for i, j in choice.finish.nonzero().tolist():
            if self.owners[i] is None or len(self.finished[i]) >= k:
                continue
            origin = choice.origin[i, j]
            toks = self.history[i, origin].tolist()[width - steps[i] :]
            att = None if seen is None else seen[i, origin]
            lps = self.logprobs[i, origin].tolist()[width - steps[i] :]
            lps.append(float(choice.raw[i, j] - self.scores[i, origin]))  # the <eos>'s
            self.finished[i].append(Hypothesis(toks, float(choice.norm[i, j]), att, lps))
        # The k best candidates that do not end here continue.
        beam_origin, next_tok = choice.beams, choice.tokens
        history = self.history.gather(1, beam_origin[..., None].expand_as(self.history))
        history = torch.cat([history, next_tok[..., None]], dim=2)
        taken = choice.scores - self.scores.gather(1, beam_origin)  # each kept token's
        logprobs = self.logprobs.gather(1, beam_origin[..., None].expand_as(self.logprobs))
        logprobs = torch.cat([logprobs, taken[..., None]], dim=2)
        if seen is not None:
            self.seen = seen.gather(1, beam_origin[..., None, None].expand(-1, -1, *seen.shape[2:]))
        ended = []
        for i, (owner, found) in enumerate(zip(self.owners, self.finished)):
            if owner is None:
                continue
            stop = len(found) >= k or (self.cancelled is not None and self.cancelled(owner))
            if stop or steps[i] >= limits[i]:
                ended.append((owner, sorted(found, key=lambda h: -h.score)))
                self.owners[i] = None  # its rows go at the next regrouping
        self.state, self.scores = state, choice.scores
        self.t, self.prev, self.history = self.t + 1, next_tok.view(-1), history
        self.logprobs = logprobs
        live = [i for i in range(m) if self.owners[i] is not None]
        # Ended sentences leave the batch (a copy of every row) once `regroup` of them have,
        # or sooner if none is left; else their rows wait for sentences that join.
        regroup = not live or (m - len(live) >= self.regroup and not self.waiting)
        self._select(live if regroup else range(m), beam_origin)
        return ended
