"""The interface every model family implements, so one search serves them all.

    memory = model.encode(src)                      # once per sentence batch
    state  = model.init_state(memory)
    logits, state = model.step(prev_tokens, state)  # one target position
    state  = model.reorder_state(state, indices)    # beams / finished sentences
    logits = model(src, tgt_in)                     # teacher forcing, training

States are nested dicts/lists/tuples of tensors whose first dimension is the
batch row; anything that is not a tensor (a step counter) is shared by all rows.
"""

from __future__ import annotations

from typing import Any

import torch
from torch import nn

from translator.specials import PAD

State = Any


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

    def forward(self, src: torch.Tensor, tgt_in: torch.Tensor) -> torch.Tensor:
        raise NotImplementedError

    def num_parameters(self) -> int:
        return sum(p.numel() for p in self.parameters())


def build_model(cfg, src_vocab: int, tgt_vocab: int, joint_vocab: bool) -> Seq2Seq:
    """The model named by cfg.type (a ModelConfig)."""
    if cfg.type == "transformer":
        from translator.models.transformer import Transformer

        return Transformer(cfg, src_vocab, tgt_vocab, share_src_tgt=joint_vocab)
    if cfg.type in ("lstm", "bahdanau", "luong"):
        from translator.models.rnn import FAMILIES

        return FAMILIES[cfg.type](cfg, src_vocab, tgt_vocab, share_src_tgt=joint_vocab)
    from translator.errors import UserError

    raise UserError(f"model.type '{cfg.type}' is not available in this version")
