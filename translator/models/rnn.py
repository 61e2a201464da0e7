"""The recurrent families: Sutskever et al. (2014), Bahdanau et al. (2015), Luong et al. (2015).

    lstm      deep LSTM encoder -> final (h, c) of every layer -> deep LSTM decoder, no attention
    bahdanau  bidirectional encoder, additive attention from the previous decoder state s_{t-1},
              context fed into the decoder RNN, max-out deep output
    luong     bidirectional encoder, global attention (dot | general | concat) from the current
              state h_t, attentional state h~_t = tanh(W_c [c_t; h_t]), optional input feeding

Choices shared by the three (model.* keys in brackets):
  * the recurrent unit of encoder and decoders is an LSTM or a GRU [rnn_type];
  * encoders run on packed sequences, so padding costs nothing and never reaches a state;
  * sources end with <eos>; the lstm family reverses the words before it and keeps <eos> last,
    [5, 6, 7, EOS, PAD] -> [7, 6, 5, EOS, PAD] [reverse_source]: the first source word ends up
    next to the first target word, and the encoder still ends on the same marker;
  * bridges: the lstm family passes the encoder's final (h, c) layer by layer to the decoder when
    enc_layers == dec_layers, else h_0 = tanh(W_h [h^1..h^L]), c_0 = W_c [c^1..c^L]; the
    attention families start every decoder layer from the top encoder layer's ends,
    s_0 = tanh(W_s [->h_S; <-h_1]) (and c_0 = W_c [->h_S; <-h_1] for an LSTM);
  * dropout [dropout] on embeddings, between stacked layers, on encoder outputs and on the
    vector the output layer reads;
  * [tie_embeddings] ties the output layer to the target embedding; the output layer reads a
    vector of size embed_dim (a bias-free projection is added when the decoder's is another
    size); with a joint vocabulary the source embedding is the same table too;
  * states are dicts of tensors with the batch row first (h and c as [N, layers, H]), so the
    default reorder_state of models/base.py serves beam search, and the rows of two states
    join as they are (continuous batching); the attention families' step_attention gives the
    weights that their step computes anyway.

This module holds what they share; each family is its own module (sutskever.py, bahdanau.py,
luong.py) with its typed config section.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Literal

import torch
from torch import nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

from translator.config.base import ModelConfig, Positive
from translator.models.base import RowStates, Seq2Seq, init_embeddings
from translator.runtime import cpu_has_bf16
from translator.specials import EOS, PAD

RNNS = {"lstm": nn.LSTM, "gru": nn.GRU}


class RNNConfig(ModelConfig):
    """Keys of the three recurrent families; depth is enc_layers / dec_layers."""

    embed_dim: Positive = 256  # width of the token embeddings
    hidden_size: Positive = 512  # units of each recurrent layer (per direction when bidirectional)
    rnn_type: Literal["lstm", "gru"] = "lstm"  # the recurrent unit

    def problems(self) -> Iterator[tuple[str, str]]:
        yield from super().problems()
        for key in ("enc_layers", "dec_layers"):
            if getattr(self, key) < 1:
                yield key, "must be at least 1 for the recurrent families"


class AttentionRNNConfig(RNNConfig):
    bidirectional: bool = True  # the encoder reads the source both ways


CELLS = {"lstm": nn.LSTMCell, "gru": nn.GRUCell}


def reverse_real_tokens(src: torch.Tensor) -> torch.Tensor:
    """Reverse each row's tokens before its final <eos>; <eos> and padding stay where they are.

    [5, 6, 7, EOS, PAD, PAD] -> [7, 6, 5, EOS, PAD, PAD]; a row without a final <eos> has all
    its real tokens reversed. Rows are right-padded. Returns a new tensor.
    """
    n = (src != PAD).sum(1, keepdim=True)  # real tokens per row
    last = src.gather(1, (n - 1).clamp(min=0))
    m = n - (last == EOS).long()  # how many tokens to reverse
    pos = torch.arange(src.size(1), device=src.device).unsqueeze(0)
    return src.gather(1, torch.where(pos < m, m - 1 - pos, pos))


# --- states: dicts of batch-first tensors --------------------------------------------------------


def from_rnn(hx) -> dict:
    """nn.LSTM/GRU final states ([layers, N, H]) -> {"h": [N, layers, H], "c": ...}."""
    if isinstance(hx, tuple):
        return {"h": hx[0].transpose(0, 1), "c": hx[1].transpose(0, 1)}
    return {"h": hx.transpose(0, 1)}


def to_rnn(state: dict):
    h = state["h"].transpose(0, 1).contiguous()
    return (h, state["c"].transpose(0, 1).contiguous()) if "c" in state else h


def run_rnn(rnn: nn.RNNBase, x, hx=None):
    """rnn(x, hx), in float32 under the CPU's bf16 autocast where the CPU has no native bf16:
    there autocast would hand oneDNN's LSTM bf16, which it has no kernel for below AVX-512
    and only emulates above."""
    if not (
        torch.is_autocast_enabled("cpu")
        and torch.get_autocast_dtype("cpu") == torch.bfloat16
        and not cpu_has_bf16()
    ):
        return rnn(x, hx)
    with torch.autocast("cpu", enabled=False):
        if hx is not None:
            hx = tuple(t.float() for t in hx) if isinstance(hx, tuple) else hx.float()
        return rnn(x.float(), hx)


def decode_rnn(rnn: nn.RNNBase, x: torch.Tensor, state: dict) -> tuple[torch.Tensor, dict]:
    """A decoder RNN over `x` [N, T, E] from `state`: outputs [N, T, H] and the next state."""
    out, hx = run_rnn(rnn, x, to_rnn(state))
    return out, from_rnn(hx)


def unstack(state: dict) -> tuple[list, list | None]:
    """Per-layer lists [N, H] for a cell stack."""
    c = list(state["c"].unbind(1)) if "c" in state else None
    return list(state["h"].unbind(1)), c


def stack(h: list, c: list | None) -> dict:
    out = {"h": torch.stack(h, 1)}
    if c is not None:
        out["c"] = torch.stack(c, 1)
    return out


# --- building blocks --------------------------------------------------------------------------


class Encoder(nn.Module):
    """Embeddings -> (bi)directional multi-layer RNN over a packed batch."""

    def __init__(self, embed, rnn_type, embed_dim, hidden, layers, bidirectional, dropout):
        super().__init__()
        self.embed, self.drop = embed, nn.Dropout(dropout)
        self.dirs = 2 if bidirectional else 1
        self.out_dim = hidden * self.dirs
        self.rnn = RNNS[rnn_type](
            embed_dim,
            hidden,
            layers,
            batch_first=True,
            dropout=dropout if layers > 1 else 0.0,
            bidirectional=bidirectional,
        )

    def forward(self, src: torch.Tensor):
        """Outputs [N, S, dirs*H] (zero on pads), final states [layers*dirs, N, H], mask [N, S]."""
        mask = src != PAD
        lengths = mask.sum(1).clamp(min=1).cpu()
        x = pack_padded_sequence(
            self.drop(self.embed(src)), lengths, batch_first=True, enforce_sorted=False
        )
        out, hx = run_rnn(self.rnn, x)
        out, _ = pad_packed_sequence(out, batch_first=True, total_length=src.size(1))
        return self.drop(out), hx, mask

    def summary(self, hx) -> torch.Tensor:
        """[->h_S; <-h_1] of the top layer, [N, dirs*H] (the forward end and the backward end)."""
        h = hx[0] if isinstance(hx, tuple) else hx
        return h[-self.dirs :].transpose(0, 1).flatten(1)


class Bridge(nn.Module):
    """Initial decoder state of every layer: h_0 = tanh(W_h x) and, for an LSTM, c_0 = W_c x_c."""

    def __init__(self, in_dim: int, hidden: int, layers: int, lstm: bool):
        super().__init__()
        self.shape = (layers, hidden)
        self.h = nn.Linear(in_dim, layers * hidden)
        self.c = nn.Linear(in_dim, layers * hidden) if lstm else None

    def forward(self, x: torch.Tensor, x_c: torch.Tensor | None = None) -> dict:
        state = {"h": torch.tanh(self.h(x)).unflatten(1, self.shape)}
        if self.c is not None:
            state["c"] = self.c(x if x_c is None else x_c).unflatten(1, self.shape)
        return state


class CellStack(nn.Module):
    """Stacked LSTMCell/GRUCell: one time step of a deep decoder that cannot run all at once."""

    def __init__(self, rnn_type, input_size, hidden, layers, dropout):
        super().__init__()
        cell = CELLS[rnn_type]
        self.cells = nn.ModuleList(
            cell(input_size if i == 0 else hidden, hidden) for i in range(layers)
        )
        self.drop = nn.Dropout(dropout)

    def forward(self, x, h: list, c: list | None):
        hs, cs = [], []
        for i, cell in enumerate(self.cells):
            if i:
                x = self.drop(x)  # between layers, as nn.LSTM's dropout
            if c is None:
                x = cell(x, h[i])
            else:
                x, c_i = cell(x, (h[i], c[i]))
                cs.append(c_i)
            hs.append(x)
        return hs, (cs if c is not None else None)


class RecurrentSeq2Seq(RowStates, Seq2Seq):
    """Embeddings, dropout, output layer and initialisation common to the three families."""

    def __init__(self, cfg, src_vocab: int, tgt_vocab: int, share_src_tgt: bool):
        super().__init__()
        self.hidden, self.lstm = cfg.hidden_size, cfg.rnn_type == "lstm"
        self.embeddings(cfg, src_vocab, tgt_vocab, cfg.embed_dim, share_src_tgt)
        self.drop = nn.Dropout(cfg.dropout)

    def output_layer(self, in_dim: int, tie: bool) -> None:
        """p(y_t) = softmax(W_y x_t + b); call last in __init__ (it also initialises weights)."""
        e = self.tgt_embed.embedding_dim
        self.out_proj = nn.Linear(in_dim, e, bias=False) if tie and in_dim != e else None
        self.generator = nn.Linear(e if tie else in_dim, self.tgt_embed.num_embeddings)
        # Weights uniform in [-0.1, 0.1] as in Luong et al. (Sutskever et al.: 0.08); embeddings
        # N(0, 1), so that the RNNs' inputs are O(1): with embeddings as small as the weights,
        # a decoder without a direct y_{t-1} -> output path sits at the unigram loss for long.
        for p in self.parameters():
            nn.init.uniform_(p, -0.1, 0.1)
        init_embeddings((self.tgt_embed, self.src_embed), 1.0)
        self.tie_output(tie)

    def logits(self, x: torch.Tensor) -> torch.Tensor:
        return self.generator(x if self.out_proj is None else self.out_proj(x))

    def embed_target(self, tokens: torch.Tensor) -> torch.Tensor:
        return self.drop(self.tgt_embed(tokens))


# --- attention families: shared encoder side --------------------------------------------------


class AttentionSeq2Seq(RecurrentSeq2Seq):
    """Bidirectional encoder, bridge, and a state that carries the source for attention."""

    source_keys = ("memory", "keys", "src_mask")
    attention_layers = 1  # the weights of the one attention of the decoder

    def __init__(self, cfg, src_vocab, tgt_vocab, share_src_tgt):
        super().__init__(cfg, src_vocab, tgt_vocab, share_src_tgt)
        self.encoder = Encoder(
            self.src_embed,
            cfg.rnn_type,
            cfg.embed_dim,
            cfg.hidden_size,
            cfg.enc_layers,
            cfg.bidirectional,
            cfg.dropout,
        )
        self.bridge = Bridge(self.encoder.out_dim, cfg.hidden_size, cfg.dec_layers, self.lstm)
        self.memory_proj: nn.Module | None = None

    def encode(self, src):
        memory, hx, mask = self.encoder(src)
        if self.memory_proj is not None:
            memory = self.memory_proj(memory)
        return {"memory": memory, "src_mask": mask, "summary": self.encoder.summary(hx)}

    def init_state(self, memory):
        return {
            **self.bridge(memory["summary"]),
            "memory": memory["memory"],  # h_j, the values
            "keys": self.attention.precompute(memory["memory"]),  # once per sentence
            "src_mask": memory["src_mask"],
        }

    def attend(self, query, state):
        return self.attention(query, state["keys"], state["memory"], state["src_mask"])

    def decode_step(self, prev_tokens, state) -> tuple[torch.Tensor, dict, torch.Tensor]:
        """Logits [N, V], the next state and the step's attention weights [N, S]."""
        raise NotImplementedError

    def step(self, prev_tokens, state):
        logits, state, _ = self.decode_step(prev_tokens, state)
        return logits, state

    def step_attention(self, prev_tokens, state, layer):
        self.check_layer(layer)
        return self.decode_step(prev_tokens, state)
