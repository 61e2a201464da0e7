"""The search loop: what every search does whichever tokens survive a step.

`begin` sets a batch up once: each sentence's length limit (rules.max_lengths, raised so its
target prefix and whatever the strategy must place fit), its prefix (rules.TargetPrefixes)
and the encoded decoder state with `width` rows per sentence. `step_log_probs` gives a step's
log-probabilities with every rule applied, in this order: the prefix's token is held before
the masks, the specials are masked, the held token is forced back, and rows at their limit
can only end (<eos>). `search` runs the loop over a fixed batch: each step it asks the
`Strategy` which rows survive and with which tokens, reorders the decoder state to them and
drops the sentences that ended, until none is left, or until the caller's `abandon_when`
check says nobody waits for the result any more (`Abandoned` is raised at the next step).
The strategies (strategies.py: `Greedy`, `Sampled`, `Beam`; constrained.py:
`ConstrainedBeam`) only choose; `BeamStream`
(beam.py) steps the same setup and rules with `Beam`'s choice over sentences that join and
leave between steps.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Protocol

import torch

from translator.config import DecodeConfig
from translator.decode.rules import (
    Hypothesis,
    TargetPrefixes,
    force_eos,
    mask_specials,
    max_lengths,
    next_log_probs,
)
from translator.models.base import Seq2Seq, State
from translator.specials import BOS

# whether the caller's decoding is no longer wanted (serve: every client of the call left)
_ABANDONED: ContextVar[Callable[[], bool] | None] = ContextVar("abandoned", default=None)


class Abandoned(Exception):
    """A decoding stopped because its `abandon_when` check turned true."""


@contextmanager
def abandon_when(check: Callable[[], bool]) -> Iterator[None]:
    """Decoding on this thread inside the block stops with `Abandoned` at the first step
    (or batch) where `check()` is true."""
    token = _ABANDONED.set(check)
    try:
        yield
    finally:
        _ABANDONED.reset(token)


def abandoned() -> Callable[[], bool] | None:
    """This thread's `abandon_when` check (None outside one), for work on other threads."""
    return _ABANDONED.get()


def stop_if(check: Callable[[], bool] | None) -> None:
    if check is not None and check():
        raise Abandoned


# A step's prefixes to hold: (prefixes, the sentence of each row, each row's step).
Pinned = tuple[TargetPrefixes, torch.Tensor, torch.Tensor]


@dataclass
class Start:
    """A batch set up for its first step."""

    state: State  # `width` rows per sentence
    limit: torch.Tensor  # output tokens allowed per sentence, <eos> not counted
    pins: TargetPrefixes  # each sentence's prefix, empty where it has none
    pinning: bool  # whether any sentence has a prefix


def begin(
    model: Seq2Seq,
    src: torch.Tensor,
    dc: DecodeConfig,
    prefixes: list[list[int]] | None,
    width: int | None,
    room: torch.Tensor | None = None,
) -> Start:
    """Encode the sentences of `src` [n, S] with `width` decoder rows each (None: the
    encoded state's one row, not copied); their limits leave room for their prefix and
    for `room` [n] more tokens (None: none)."""
    n, dev = src.size(0), src.device
    prefixes = prefixes or [[] for _ in range(n)]
    limit = max_lengths(src, dc.max_len_a, dc.max_len_b, model.max_output_len)
    pins = TargetPrefixes(prefixes, dev)
    need = pins.lengths if room is None else room + pins.lengths
    limit = torch.maximum(limit, need)
    state = model.init_state(model.encode(src))
    if width is not None:
        state = model.reorder_state(state, torch.arange(n, device=dev).repeat_interleave(width))
    return Start(state, limit, pins, any(prefixes))


def step_log_probs(
    model: Seq2Seq,
    dc: DecodeConfig,
    prev: torch.Tensor,
    state: State,
    last: torch.Tensor,
    layer: int | None = None,
    pinned: Pinned | None = None,
) -> tuple[torch.Tensor, State, torch.Tensor | None]:
    """The step's log-probabilities [N, V] after the previous tokens `prev` [N], with the
    prefixes of `pinned` held, the specials masked and rows `last` [N] (at their limit)
    ending; the next state; decoder `layer`'s attention weights (None without a layer)."""
    logp, state, weights = next_log_probs(model, prev, state, layer)
    held = None if pinned is None else pinned[0].hold(logp, pinned[1], pinned[2])
    logp = TargetPrefixes.force(mask_specials(logp, dc.allow_unk, model.never_output), held)
    return force_eos(logp, last), state, weights


class Strategy(Protocol):
    """What survives each step of `search`."""

    width: int | None  # decoder rows per sentence (None: one, the encoded state's own)

    def room(self, n: int, device: torch.device) -> torch.Tensor | None:
        """Tokens [n] each output needs besides its prefix (None: none)."""

    def start(self, n: int, dc: DecodeConfig, device: torch.device) -> None:
        """Ready for a batch of `n` sentences."""

    def select(
        self, logp: torch.Tensor, weights, live: torch.Tensor, t: int, last: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor | None, torch.Tensor] | None:
        """Given step `t`'s log-probabilities [rows, V] (and attention weights, or None) of
        sentences `live` [m] (`width` rows each; `last` [rows]: at their limit): the
        sentences that go on, the rows their next rows come from (None: the same rows)
        and the tokens those rows took; None once every sentence has ended."""

    def results(self) -> list[list[Hypothesis]]:
        """Each sentence's hypotheses, best first."""


@torch.no_grad()
def search(
    model: Seq2Seq,
    src: torch.Tensor,
    dc: DecodeConfig,
    strategy: Strategy,
    attention_layer: int | None = None,
    prefixes: list[list[int]] | None = None,
) -> list[list[Hypothesis]]:
    """Decode the sentences of `src` [n, S] together, `strategy` choosing at each step."""
    n, dev, width = src.size(0), src.device, strategy.width or 1
    start = begin(model, src, dc, prefixes, strategy.width, strategy.room(n, dev))
    strategy.start(n, dc, dev)
    state, live = start.state, torch.arange(n, device=dev)
    prev = torch.full((n * width,), BOS, dtype=torch.long, device=dev)
    check = abandoned()
    for t in range(int(start.limit.max()) + 1):  # + 1: the <eos> after a full-length output
        stop_if(check)
        rows = live if width == 1 else live.repeat_interleave(width)
        last = start.limit[rows] <= t
        pinned = (start.pins, rows, torch.full_like(rows, t)) if start.pinning else None
        logp, state, weights = step_log_probs(model, dc, prev, state, last, attention_layer, pinned)
        chosen = strategy.select(logp, weights, live, t, last)
        if chosen is None:
            break
        live, origins, prev = chosen
        if origins is not None:
            state = model.reorder_state(state, origins)
    return strategy.results()
