"""The interface every model family implements, so one search serves them all.

The core, which every family has:
    memory = model.encode(src)                      # once per sentence batch
    state  = model.init_state(memory)
    logits, state = model.step(prev_tokens, state)  # one target position
    state  = model.reorder_state(state, indices)    # beams / finished sentences
    logits = model(src, tgt_in)                     # teacher forcing, training
and what the searches call, the same for every family:
    logp, state = model.log_probs(prev_tokens, state)  # float32 log-softmax of the step

Optional, declared by the family:
    logits, state, weights = model.step_attention(prev_tokens, state, layer)
        # where attention_layers > 0: the step and decoder `layer`'s attention weights [N, S]
    model.use_cache = False   # where `uncached_step`: recompute the whole prefix at every
                              # step, the reference that the cache must agree with
    StreamingStates           # where `supports_streaming`: merge_states and place_states,
                              # for sentences that join a running search
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Protocol

import torch
from torch import nn

from translator.specials import PAD

# A step state (and an encoder's memory): a dict of tensors, or of lists, tuples and dicts of
# them, batch row first; values that are not tensors (a step counter) are shared by all rows.
State = dict[str, Any]


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


def join_rows(states: list[Any]) -> Any:
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


def put_rows(state: Any, rows: torch.Tensor, new: Any) -> Any:
    """`state` with its rows `rows` replaced by those of `new` (the same layout), in place
    where the shapes agree; where `new` is longer beyond the first dimension, `state` is
    first padded at the end (a copy), and where shorter, `new` is. Under autocast a fresh
    state and one that has stepped may differ in dtype: both take the wider, as in join_rows."""
    if isinstance(state, torch.Tensor):
        shape = tuple(max(a, b) for a, b in zip(state.shape, new.shape))
        dtype = torch.promote_types(state.dtype, new.dtype)
        return pad_to(state, shape).to(dtype).index_copy_(0, rows, pad_to(new, shape).to(dtype))
    if isinstance(state, dict):
        return {k: put_rows(v, rows, new[k]) for k, v in state.items()}
    if isinstance(state, (list, tuple)):
        return type(state)(put_rows(v, rows, n) for v, n in zip(state, new))
    if state != new:
        raise ValueError(f"states that differ in {state!r} cannot be joined")
    return state


def select_rows(state: Any, indices: torch.Tensor) -> Any:
    """Keep (and repeat or reorder) batch rows of every tensor in a nested state."""
    if isinstance(state, torch.Tensor):
        return state.index_select(0, indices)
    if isinstance(state, dict):
        return {k: select_rows(v, indices) for k, v in state.items()}
    if isinstance(state, (list, tuple)):
        return type(state)(select_rows(v, indices) for v in state)
    return state


def log_softmax(logits: torch.Tensor) -> torch.Tensor:
    """Normalised log-probabilities in float32, whatever dtype autocast computed the logits in."""
    return torch.log_softmax(logits.float(), dim=-1)


def init_embeddings(tables: Iterable[nn.Embedding], std: float) -> None:
    """N(0, std) weights with a zero padding row, table by table in the order given (the
    random stream, and so the initial weights, depend on it)."""
    for table in tables:
        nn.init.normal_(table.weight, 0.0, std)
        with torch.no_grad():
            table.weight[PAD].zero_()


def dropout_attribute(module: nn.Module) -> str | None:
    """Where `module` keeps a dropout rate (nn.Dropout's p, nn.LSTM/GRU's dropout between
    layers, the Transformer attention's dropout_p), or None."""
    if isinstance(module, nn.Dropout):
        return "p"
    if isinstance(module, nn.RNNBase):
        return "dropout"
    return "dropout_p" if isinstance(getattr(module, "dropout_p", None), float) else None


class Seq2Seq(nn.Module):
    """Base class: subclasses implement encode, init_state, step and forward."""

    pad_id = PAD
    # State entries that depend on the source sentence only (encoder outputs, attention keys):
    # every beam of a sentence holds the same rows of them.
    source_keys: tuple[str, ...] = ()
    max_output_len: int | None = None  # steps the decoder can take at most (positions)
    # Target ids that searches never output: the corpus tags, which only sources carry
    # (set from the tokenizer where the model is built, Tokenizer.never_output).
    never_output: tuple[int, ...] = ()
    # Decoder layers whose source attention step_attention can return (0: the family has none).
    attention_layers: int = 0
    uncached_step: bool = False  # the family has a step without its cache (use_cache=False)
    # Stacks of identical layers (ModuleList attributes) that train.compile compiles one
    # layer at a time (train/compiling.py); empty: it compiles the whole model.
    compile_regions: tuple[str, ...] = ()
    use_cache: bool = True
    # The family is a StreamingStates: sentences may join its running searches.
    supports_streaming: bool = False
    # Formats `translator export` can write the family in; export_spec(fmt) builds them.
    export_formats: tuple[str, ...] = ()

    def pause_dropout(self, paused: bool) -> None:
        """Every dropout of the model at 0 (paused) or back at the rate it was built with."""
        if "_dropout_rates" not in self.__dict__:  # (module, attribute, built rate), found once
            found = ((m, dropout_attribute(m)) for m in self.modules())
            self._dropout_rates = [(m, a, getattr(m, a)) for m, a in found if a]
        for m, attr, rate in self._dropout_rates:
            setattr(m, attr, 0.0 if paused else rate)

    def embeddings(
        self, cfg, src_vocab: int, tgt_vocab: int, dim: int, share_src_tgt: bool, share=None
    ):
        """The target and source embedding tables (one table where the vocabulary is joint
        and model.tie_embeddings asks for it, or where `share` says so when not None)."""
        self.tgt_embed = nn.Embedding(tgt_vocab, dim, padding_idx=self.pad_id)
        if share is None:
            share = share_src_tgt and cfg.tie_embeddings and src_vocab == tgt_vocab
        self.src_embed = (
            self.tgt_embed if share else nn.Embedding(src_vocab, dim, padding_idx=self.pad_id)
        )

    def tie_output(self, tie: bool) -> None:
        """The output layer (`generator`) shares the target embedding table's weights; call
        after initialising, which would otherwise draw the shared weights twice."""
        if tie:
            self.generator.weight = self.tgt_embed.weight

    def encode(self, src: torch.Tensor) -> State:
        raise NotImplementedError

    def init_state(self, memory: State) -> State:
        raise NotImplementedError

    def step(self, prev_tokens: torch.Tensor, state: State) -> tuple[torch.Tensor, State]:
        """Logits [N, V] for the next token given the previous one [N]."""
        raise NotImplementedError

    def log_probs(self, prev_tokens: torch.Tensor, state: State) -> tuple[torch.Tensor, State]:
        """The step's normalised log-probabilities [N, V] in float32, what every search
        scores with. Families do not override it: the searches normalise step_attention's
        logits the same way (decode/rules.py)."""
        logits, state = self.step(prev_tokens, state)
        return log_softmax(logits), state

    def step_attention(
        self, prev_tokens: torch.Tensor, state: State, layer: int
    ) -> tuple[torch.Tensor, State, torch.Tensor]:
        """The step, and decoder `layer`'s attention weights over the source [N, S] (the mean
        of the heads where there are several); families with attention_layers implement it."""
        self.check_layer(layer)
        raise NotImplementedError

    def check_layer(self, layer: int) -> int:
        """`layer`, if the family has that attention layer (negative: from the last)."""
        if not -self.attention_layers <= layer < self.attention_layers:
            raise ValueError(f"layer {layer} of {self.attention_layers} attention layers")
        return layer

    def attention_label(self, layer: int) -> str:
        """Words for a picture's title: which weights step_attention(layer) gives."""
        return ""

    @property
    def alignment_layer(self) -> int | None:
        """The layer whose `step_attention` weights word alignments read (decode/alignment.py:
        `translate --alignments`, the server's "alignments", and the layer a CTranslate2
        export returns attention from); None where the family has no attention. By default
        the last attention layer; a family whose weights for another layer align better
        names that one, and whatever step_attention returns for it is what alignments read."""
        return self.attention_layers - 1 if self.attention_layers else None

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


class StreamingStates(Protocol):
    """What continuous batching (decode/beam.py's BeamStream, serve/streaming.py) needs beyond
    the core: sentences joining a search that is already running. A model offers it where
    `supports_streaming` is True."""

    def merge_states(self, states: list[State]) -> State:
        """One state with the rows of `states`, in order; each may have taken a different
        number of steps."""
        ...

    def place_states(self, state: State, rows: torch.Tensor, new: State) -> State:
        """`state` with rows `rows` taken by the rows of `new`, a state that has not stepped
        yet (sentences joining where others ended); written in place where it can be."""
        ...


class RowStates:
    """StreamingStates for a family whose state rows are independent and count no steps:
    rows are joined and replaced as they are (mixed in before Seq2Seq)."""

    supports_streaming = True

    def merge_states(self, states: list[State]) -> State:
        return join_rows(states)

    def place_states(self, state: State, rows: torch.Tensor, new: State) -> State:
        return put_rows(state, rows, new)
