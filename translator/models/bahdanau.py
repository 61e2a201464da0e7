"""Bahdanau, Cho and Bengio (2015): additive attention from the previous decoder state."""

from __future__ import annotations

import torch
from torch import nn

from translator.models.attention import AdditiveAttention
from translator.models.family import Family
from translator.models.rnn import AttentionRNNConfig, AttentionSeq2Seq, CellStack, stack, unstack


class BahdanauConfig(AttentionRNNConfig):
    type: str = "bahdanau"


class Bahdanau(AttentionSeq2Seq):
    """Attention from the previous state, context into the RNN, max-out deep output (sec. 3,
    appendix A). The output reads s_t (eq. 4, p(y_t) = g(y_{t-1}, s_t, c_t))."""

    def __init__(self, cfg, src_vocab: int, tgt_vocab: int, share_src_tgt: bool = False):
        super().__init__(cfg, src_vocab, tgt_vocab, share_src_tgt)
        e, h, d = cfg.embed_dim, cfg.hidden_size, self.encoder.out_dim
        self.attention = AdditiveAttention(h, d, h)
        self.cells = CellStack(cfg.rnn_type, e + d, h, cfg.dec_layers, cfg.dropout)
        self.readout = nn.Linear(h + d + e, 2 * e)  # max-out pieces, pooled in pairs
        self.output_layer(e, cfg.tie_embeddings)

    def advance(self, y, h, c, state):
        # e_tj = v^T tanh(W s_{t-1} + U h_j), alpha_tj = softmax_j(e_tj), c_t = sum_j alpha_tj h_j
        context, alpha = self.attend(h[-1], state)
        # s_t = f(s_{t-1}, y_{t-1}, c_t): the context enters with the previous target embedding
        h, c = self.cells(torch.cat([y, context], -1), h, c)
        return h, c, context, alpha

    def predict(self, s, context, y):
        # t_t = max-out(W_o [s_t; c_t; E y_{t-1}]) (pairs of units), p(y_t) = softmax(W_y t_t)
        t = self.readout(torch.cat([s, context, y], -1)).unflatten(-1, (-1, 2)).amax(-1)
        # The readout sees E y_{t-1} with N(0, 1) embeddings, and with tied weights the output
        # layer is that same table: scaled by embed_dim^-1/2 the first logits have a standard
        # deviation near 1 instead of ~18 (a first loss near ln V instead of ~70).
        return self.logits(self.drop(t) * self.tgt_embed.embedding_dim**-0.5)

    def decode_step(self, prev_tokens, state):
        y = self.embed_target(prev_tokens)
        h, c, context, alpha = self.advance(y, *unstack(state), state)
        return self.predict(h[-1], context, y), {**state, **stack(h, c)}, alpha

    def forward(self, src, tgt_in):
        state = self.init_state(self.encode(src))
        ys = self.embed_target(tgt_in)
        h, c = unstack(state)
        tops, contexts = [], []
        for y in ys.unbind(1):  # s_t needs c_t, which needs s_{t-1}: one step at a time
            h, c, context, _ = self.advance(y, h, c, state)
            tops.append(h[-1])
            contexts.append(context)
        return self.predict(torch.stack(tops, 1), torch.stack(contexts, 1), ys)


FAMILY = Family(
    "bahdanau",
    BahdanauConfig,
    Bahdanau,
    "Bahdanau et al. (2015), additive attention",
    title="Bahdanau RNN",
)
