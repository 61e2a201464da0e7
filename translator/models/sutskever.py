"""Sutskever, Vinyals and Le (2014): a deep LSTM reads the source, another writes the target."""

from __future__ import annotations

from translator.models.family import Family
from translator.models.rnn import (
    RNNS,
    Bridge,
    Encoder,
    RecurrentSeq2Seq,
    RNNConfig,
    decode_rnn,
    from_rnn,
    reverse_real_tokens,
)


class LSTMConfig(RNNConfig):
    type: str = "lstm"
    reverse_source: bool = True  # feed the source backwards (sec. 3.3 of the paper)


class SutskeverLSTM(RecurrentSeq2Seq):
    """p(y_1..y_T' | x_1..x_T) = prod_t p(y_t | v, y_1..y_{t-1}) (eq. 1), where v is the last
    (h, c) of a deep LSTM that read the source reversed; the decoder is a deep LSTM started
    from v, and p(y_t | ...) = softmax(W_y h_t) over its top layer."""

    def __init__(self, cfg, src_vocab: int, tgt_vocab: int, share_src_tgt: bool = False):
        super().__init__(cfg, src_vocab, tgt_vocab, share_src_tgt)
        e, h = cfg.embed_dim, cfg.hidden_size
        self.reverse = cfg.reverse_source
        self.encoder = Encoder(
            self.src_embed, cfg.rnn_type, e, h, cfg.enc_layers, False, cfg.dropout
        )
        self.bridge = None
        if cfg.enc_layers != cfg.dec_layers:  # learned map between the depths
            self.bridge = Bridge(cfg.enc_layers * h, h, cfg.dec_layers, self.lstm)
        self.decoder = RNNS[cfg.rnn_type](
            e, h, cfg.dec_layers, batch_first=True, dropout=cfg.dropout if cfg.dec_layers > 1 else 0
        )
        self.output_layer(h, cfg.tie_embeddings)

    def encode(self, src):
        if self.reverse:
            src = reverse_real_tokens(src)
        _, hx, _ = self.encoder(src)
        return from_rnn(hx)  # v: {"h": [N, enc_layers, H], "c": ...}

    def init_state(self, memory):
        if self.bridge is None:
            return dict(memory)
        c = memory["c"].flatten(1) if "c" in memory else None
        return self.bridge(memory["h"].flatten(1), c)

    def step(self, prev_tokens, state):
        out, state = decode_rnn(self.decoder, self.embed_target(prev_tokens).unsqueeze(1), state)
        return self.logits(self.drop(out[:, 0])), state

    def forward(self, src, tgt_in):
        state = self.init_state(self.encode(src))
        # The whole target in one (cuDNN / oneDNN) call: no loop over time.
        out, _ = decode_rnn(self.decoder, self.embed_target(tgt_in), state)
        return self.logits(self.drop(out))


FAMILY = Family(
    "lstm",
    LSTMConfig,
    SutskeverLSTM,
    "Sutskever et al. (2014), no attention",
    title="Sutskever LSTM",
)
