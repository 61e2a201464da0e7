"""Luong, Pham and Manning (2015): global attention from the current decoder state."""

from __future__ import annotations

from typing import Literal

import torch
from torch import nn

from translator.models.attention import luong_attention
from translator.models.family import Family
from translator.models.rnn import (
    RNNS,
    AttentionRNNConfig,
    AttentionSeq2Seq,
    CellStack,
    decode_rnn,
    stack,
    unstack,
)


class LuongConfig(AttentionRNNConfig):
    type: str = "luong"
    attention_score: Literal["dot", "general", "concat"] = "general"  # score of a source position
    input_feeding: bool = True  # feed the last attentional state into the next step


class Luong(AttentionSeq2Seq):
    """Global attention from the current state (sec. 3.1), input feeding (sec. 3.3)."""

    def __init__(self, cfg, src_vocab: int, tgt_vocab: int, share_src_tgt: bool = False):
        super().__init__(cfg, src_vocab, tgt_vocab, share_src_tgt)
        e, h, d = cfg.embed_dim, cfg.hidden_size, self.encoder.out_dim
        if cfg.attention_score == "dot" and d != h:  # h_t^T h_s needs equal sizes
            self.memory_proj = nn.Linear(d, h, bias=False)
            d = h
        self.attention = luong_attention(cfg.attention_score, h, d)
        self.input_feeding = cfg.input_feeding
        layers, p = cfg.dec_layers, cfg.dropout
        if self.input_feeding:  # x_t = [E y_{t-1}; h~_{t-1}]: one step at a time
            self.cells = CellStack(cfg.rnn_type, e + h, h, layers, p)
        else:  # x_t = E y_{t-1}: the whole target in one call
            self.decoder = RNNS[cfg.rnn_type](
                e, h, layers, batch_first=True, dropout=p if layers > 1 else 0.0
            )
        self.combine = nn.Linear(d + h, h, bias=False)  # W_c
        # With the output tied to the N(0, 1) embedding table the first logits would have a
        # standard deviation near 9 (a first loss near 35); scaled by embed_dim^-1/2, near 1.
        self.readout_scale = e**-0.5 if cfg.tie_embeddings else 1.0
        self.output_layer(h, cfg.tie_embeddings)

    def init_state(self, memory):
        state = super().init_state(memory)
        if self.input_feeding:  # h~_0 = 0
            state["feed"] = state["h"].new_zeros(state["h"].size(0), self.hidden)
        return state

    def attentional(self, h_t, state):
        # a_t(s) = softmax_s(score(h_t, h_s)) (eq. 7), c_t = sum_s a_t(s) h_s,
        # h~_t = tanh(W_c [c_t; h_t]) (eq. 5); p(y_t) = softmax(W_s h~_t) (eq. 6)
        context, alpha = self.attend(h_t, state)
        return self.drop(torch.tanh(self.combine(torch.cat([context, h_t], -1)))), alpha

    def readout(self, h_tilde):
        return self.logits(h_tilde * self.readout_scale)

    def decode_step(self, prev_tokens, state):
        y = self.embed_target(prev_tokens)
        if self.input_feeding:
            h, c = self.cells(torch.cat([y, state["feed"]], -1), *unstack(state))
            top, new = h[-1], stack(h, c)
        else:
            out, new = decode_rnn(self.decoder, y.unsqueeze(1), state)
            top = out[:, 0]
        h_tilde, alpha = self.attentional(top, state)
        if self.input_feeding:
            new["feed"] = h_tilde
        return self.readout(h_tilde), {**state, **new}, alpha

    def forward(self, src, tgt_in):
        state = self.init_state(self.encode(src))
        ys = self.embed_target(tgt_in)
        if not self.input_feeding:
            out, _ = decode_rnn(self.decoder, ys, state)  # h_1..h_T in one call
            h_tilde, _ = self.attentional(out, state)  # all T steps with batched matmuls
            return self.readout(h_tilde)
        h, c = unstack(state)
        feed, outs = state["feed"], []
        for y in ys.unbind(1):
            h, c = self.cells(torch.cat([y, feed], -1), h, c)
            feed, _ = self.attentional(h[-1], state)
            outs.append(feed)
        return self.readout(torch.stack(outs, 1))


FAMILY = Family(
    "luong", LuongConfig, Luong, "Luong et al. (2015), multiplicative attention", title="Luong RNN"
)
