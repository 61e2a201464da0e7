"""The interface every model family implements, so one search serves them all.

    memory = model.encode(src)                      # once per sentence batch
    state  = model.init_state(memory)
    logits, state = model.step(prev_tokens, state)  # one target position
    state  = model.reorder_state(state, indices)    # beams / finished sentences
    logits = model(src, tgt_in)                     # teacher forcing, training

Two options of the step, the same for every family:
    model.show_attention(layer)   # later steps put that decoder layer's attention weights
                                  # [N, S] under state["attention"]; None switches it off
    model.use_cache = False       # where `uncached_step`: recompute the whole prefix at
                                  # every step, the reference that the cache must agree with
    state  = model.merge_states([a, b])  # rows of two states, which may be at different
                                         # steps: sentences joining a running search
    state  = model.place_states(state, rows, new)  # rows of a fresh state in place of others

States are nested dicts/lists/tuples of tensors whose first dimension is the
batch row; anything that is not a tensor (a step counter) is shared by all rows.
"""

from __future__ import annotations

from typing import Any

import torch
from torch import nn

from translator.specials import PAD

State = Any


def pad_to(x: torch.Tensor, shape: tuple[int, ...], left: bool = False) -> torch.Tensor:
    """`x` padded with zeros (False) at the end (or the start) of every dimension after the
    first, up to `shape[1:]`."""
    if tuple(x.shape[1:]) == tuple(shape[1:]):
        return x
    out = x.new_zeros((x.size(0), *shape[1:]))
    out[
        (
            slice(None),
            *(slice(n - m, n) if left else slice(0, m) for m, n in zip(x.shape[1:], shape[1:])),
        )
    ] = x
    return out


def join_rows(states: list[State]) -> State:
    """The rows of several nested states of the same layout, one after another; tensors that
    differ beyond the first dimension (source lengths) are padded at the end with zeros, which
    the masks that go with them (False) leave out. Other values must agree."""
    first = states[0]
    if isinstance(first, torch.Tensor):
        shape = [max(s.size(d) for s in states) for d in range(first.dim())]
        return torch.cat([pad_to(s, tuple(shape)) for s in states])
    if isinstance(first, dict):
        return {k: join_rows([s[k] for s in states]) for k in first}
    if isinstance(first, (list, tuple)):
        return type(first)(join_rows(list(parts)) for parts in zip(*states))
    if any(s != first for s in states):
        raise ValueError(f"states that differ in {first!r} cannot be joined")
    return first


def put_rows(state: State, rows: torch.Tensor, new: State) -> State:
    """`state` with its rows `rows` replaced by those of `new` (the same layout), in place
    where the shapes agree; where `new` is longer beyond the first dimension, `state` is
    first padded at the end (a copy), and where shorter, `new` is."""
    if isinstance(state, torch.Tensor):
        shape = tuple(max(a, b) for a, b in zip(state.shape, new.shape))
        return pad_to(state, shape).index_copy_(0, rows, pad_to(new, shape))
    if isinstance(state, dict):
        return {k: put_rows(v, rows, new[k]) for k, v in state.items()}
    if isinstance(state, (list, tuple)):
        return type(state)(put_rows(v, rows, n) for v, n in zip(state, new))
    if state != new:
        raise ValueError(f"states that differ in {state!r} cannot be joined")
    return state


def select_rows(state: State, indices: torch.Tensor) -> State:
    """Keep (and repeat or reorder) batch rows of every tensor in a nested state."""
    if isinstance(state, torch.Tensor):
        return state.index_select(0, indices)
    if isinstance(state, dict):
        return {k: select_rows(v, indices) for k, v in state.items()}
    if isinstance(state, (list, tuple)):
        return type(state)(select_rows(v, indices) for v in state)
    return state


class Seq2Seq(nn.Module):
    """Base class: subclasses implement encode, init_state, step and forward."""

    pad_id = PAD
    # State entries that depend on the source sentence only (encoder outputs, attention keys):
    # every beam of a sentence holds the same rows of them.
    source_keys: tuple[str, ...] = ()
    max_output_len: int | None = None  # steps the decoder can take at most (positions)
    # Decoder layers whose source attention a step can return (0: the family has none).
    attention_layers: int = 0
    attention_layer: int | None = None  # the one shown, see show_attention
    uncached_step: bool = False  # the family has a step without its cache (use_cache=False)
    use_cache: bool = True
    # Formats `translator export` can write the family in; export_spec(fmt) builds them.
    export_formats: tuple[str, ...] = ()

    def show_attention(self, layer: int | None) -> None:
        """From the next step on, put decoder `layer`'s attention weights [N, S] (mean of
        heads where there are several) under state["attention"]; None stops it."""
        if layer is not None and not -self.attention_layers <= layer < self.attention_layers:
            raise ValueError(f"layer {layer} of {self.attention_layers} attention layers")
        self.attention_layer = layer

    def attention_label(self, layer: int) -> str:
        """Words for a picture's title: which weights show_attention(layer) gives."""
        return ""

    def encode(self, src: torch.Tensor) -> State:
        raise NotImplementedError

    def init_state(self, memory: State) -> State:
        raise NotImplementedError

    def step(self, prev_tokens: torch.Tensor, state: State) -> tuple[torch.Tensor, State]:
        """Logits [N, V] for the next token given the previous one [N]."""
        raise NotImplementedError

    def reorder_state(
        self, state: State, indices: torch.Tensor, same_sentences: bool = False
    ) -> State:
        """Rows `indices` of the state. With `same_sentences` (beams moved only within their
        own sentence), the source-only entries are already right and are not copied."""
        if not same_sentences or not isinstance(state, dict):
            return select_rows(state, indices)
        return {
            k: v if k in self.source_keys else select_rows(v, indices) for k, v in state.items()
        }

    def merge_states(self, states: list[State]) -> State:
        """One state with the rows of `states`, in order; each may have taken a different
        number of steps (a family whose state counts steps overrides this)."""
        states = [{k: v for k, v in s.items() if k != "attention"} for s in states]
        return join_rows(states)

    def place_states(self, state: State, rows: torch.Tensor, new: State) -> State:
        """`state` with rows `rows` taken by the rows of `new`, a state that has not stepped
        yet (sentences joining where others ended); written in place where it can be."""
        strip = [{k: v for k, v in s.items() if k != "attention"} for s in (state, new)]
        return put_rows(strip[0], rows, strip[1])

    def forward(self, src: torch.Tensor, tgt_in: torch.Tensor) -> torch.Tensor:
        raise NotImplementedError

    def export_spec(self, fmt: str) -> Any:
        """The weights and shape of the model in the terms of another engine: for
        "ctranslate2", a filled `ctranslate2.specs.TransformerSpec` (vocabularies not yet
        registered). Only for the formats the family lists in `export_formats`."""
        raise NotImplementedError(f"{type(self).__name__} does not export to {fmt}")

    def flops_per_token(self) -> tuple[int, int] | None:
        """(FLOPs per source token, per target token) of a training step, for utilisation
        figures; None where the family gives no estimate."""
        return None

    def num_parameters(self) -> int:
        return sum(p.numel() for p in self.parameters())
