"""The Transformer of Vaswani et al. (2017), "Attention Is All You Need".

Equations, as in the paper:
    Attention(Q, K, V) = softmax(Q K^T / sqrt(d_k)) V          (sec. 3.2.1)
    MultiHead = Concat(head_1..head_h) W^O                       (sec. 3.2.2)
    FFN(x) = max(0, x W1 + b1) W2 + b2                           (sec. 3.3)
    PE(pos, 2i) = sin(pos / 10000^(2i/d)), PE(pos, 2i+1) = cos(..) (sec. 3.5)
    embeddings are multiplied by sqrt(d_model)                   (sec. 3.4)

The decoder's step state caches each layer's self-attention keys and values
and the cross-attention keys and values of the source, so one step computes
only the newest position.
"""

from __future__ import annotations

import math
from collections.abc import Iterator

import torch
import torch.nn.functional as F
from torch import nn

from translator.config.base import ModelConfig, Positive, Probability
from translator.models.base import Seq2Seq, init_embeddings, join_rows, pad_to, put_rows
from translator.models.family import Family

# cuDNN's attention kernel (which PyTorch prefers on Hopper GPUs) builds an execution plan for
# each new input shape, and training batches and decoding steps change shape at nearly every
# call; the flash and memory-efficient kernels need no plan. Switched off for the process.
torch.backends.cuda.enable_cudnn_sdp(False)


class TransformerConfig(ModelConfig):
    type: str = "transformer"
    d_model: Positive = 256  # width of the embeddings and of every layer's output
    heads: Positive = 4  # attention heads per layer (d_model must be divisible by it)
    ff_dim: Positive = 1024  # inner width of each position-wise feed-forward block
    attention_dropout: Probability = 0.0  # dropout on the attention weights
    pre_norm: bool = True  # LayerNorm before each sublayer (False: the paper's post-norm)

    def problems(self) -> Iterator[tuple[str, str]]:
        yield from super().problems()
        if self.d_model % self.heads:
            yield "d_model", f"must be divisible by model.heads ({self.heads})"


def sinusoids(length: int, dim: int) -> torch.Tensor:
    pos = torch.arange(length, dtype=torch.float32).unsqueeze(1)
    inv = torch.exp(torch.arange(0, dim, 2, dtype=torch.float32) * (-math.log(10000.0) / dim))
    pe = torch.zeros(length, dim)
    pe[:, 0::2] = torch.sin(pos * inv)
    pe[:, 1::2] = torch.cos(pos * inv)
    return pe


def weights(q, k, mask=None) -> torch.Tensor:
    """softmax(Q K^T / sqrt(d_k)) [B, H, Lq, Lk], keys where `mask` is False left out."""
    scores = q @ k.transpose(-1, -2) * q.size(-1) ** -0.5
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    return scores.softmax(-1)


def one_query(q, k, v, mask=None) -> torch.Tensor:
    """Attention of one query position (a decoding step) as two batched products, which a
    CPU runs faster than the fused kernel at a decoding step's key lengths."""
    return weights(q, k, mask) @ v


class Attention(nn.Module):
    """Multi-head attention through scaled_dot_product_attention (flash path on GPU)."""

    def __init__(self, d: int, heads: int, dropout: float, self_attention: bool):
        super().__init__()
        self.heads, self.dropout_p = heads, dropout
        self.self_attention = self_attention
        if self_attention:
            self.qkv = nn.Linear(d, 3 * d)
        else:
            self.q = nn.Linear(d, d)
            self.kv = nn.Linear(d, 2 * d)
        self.out = nn.Linear(d, d)

    def split(self, x: torch.Tensor) -> torch.Tensor:  # [B, L, D] -> [B, H, L, D/H]
        b, n, d = x.shape
        return x.view(b, n, self.heads, d // self.heads).transpose(1, 2)

    def keys_values(self, memory: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        k, v = self.kv(memory).chunk(2, dim=-1)
        return self.split(k), self.split(v)

    def attend(self, q, k, v, mask=None, causal=False) -> torch.Tensor:
        if q.size(2) == 1 and not self.training and q.device.type == "cpu":
            y = one_query(q, k, v, mask)
        else:
            p = self.dropout_p if self.training else 0.0
            y = F.scaled_dot_product_attention(
                q, k, v, attn_mask=mask, dropout_p=p, is_causal=causal
            )
        b, h, n, dh = y.shape
        return self.out(y.transpose(1, 2).reshape(b, n, h * dh))

    def forward_self(self, x, mask=None, causal=False, cache=None):
        q, k, v = (self.split(t) for t in self.qkv(x).chunk(3, dim=-1))
        if cache is not None:  # one new position: append to the cached prefix (`mask`: which
            if cache[0] is not None:  # cached positions are a row's own, where rows differ)
                k, v = torch.cat([cache[0], k], 2), torch.cat([cache[1], v], 2)
            return self.attend(q, k, v, mask), (k, v)
        return self.attend(q, k, v, mask, causal), None

    def forward_cross(self, x, kv, mask, keep_weights=False):
        """The attention's output and, with `keep_weights`, its weights averaged over the
        heads [B, Lq, Lk] (the same softmax again, for pictures), else None."""
        q = self.split(self.q(x))
        kept = weights(q, kv[0], mask).mean(1) if keep_weights else None
        return self.attend(q, kv[0], kv[1], mask), kept


class FeedForward(nn.Sequential):
    def __init__(self, d: int, ff: int, dropout: float):
        super().__init__(nn.Linear(d, ff), nn.ReLU(), nn.Dropout(dropout), nn.Linear(ff, d))


class Sublayer(nn.Module):
    """Residual + dropout + LayerNorm, before (pre-norm) or after (the paper's post-norm)."""

    def __init__(self, d: int, dropout: float, pre_norm: bool):
        super().__init__()
        self.norm, self.drop, self.pre_norm = nn.LayerNorm(d), nn.Dropout(dropout), pre_norm

    def forward(self, x, fn):
        if self.pre_norm:
            y, extra = fn(self.norm(x))
            return x + self.drop(y), extra
        y, extra = fn(x)
        return self.norm(x + self.drop(y)), extra


class EncoderLayer(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        d = cfg.d_model
        self.attn = Attention(d, cfg.heads, cfg.attention_dropout, self_attention=True)
        self.ff = FeedForward(d, cfg.ff_dim, cfg.dropout)
        self.sub1 = Sublayer(d, cfg.dropout, cfg.pre_norm)
        self.sub2 = Sublayer(d, cfg.dropout, cfg.pre_norm)

    def forward(self, x, mask):
        x, _ = self.sub1(x, lambda h: self.attn.forward_self(h, mask=mask))
        x, _ = self.sub2(x, lambda h: (self.ff(h), None))
        return x


class DecoderLayer(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        d = cfg.d_model
        self.self_attn = Attention(d, cfg.heads, cfg.attention_dropout, self_attention=True)
        self.cross_attn = Attention(d, cfg.heads, cfg.attention_dropout, self_attention=False)
        self.ff = FeedForward(d, cfg.ff_dim, cfg.dropout)
        self.subs = nn.ModuleList(Sublayer(d, cfg.dropout, cfg.pre_norm) for _ in range(3))

    def forward(self, x, cross_kv, src_mask, cache=None, self_mask=None, keep_weights=False):
        """The layer's output, its self-attention cache, and the cross-attention weights
        [B, L, S] where `keep_weights` asks for them (else None)."""
        causal = cache is None
        x, cache = self.subs[0](
            x, lambda h: self.self_attn.forward_self(h, self_mask, causal=causal, cache=cache)
        )
        x, kept = self.subs[1](
            x, lambda h: self.cross_attn.forward_cross(h, cross_kv, src_mask, keep_weights)
        )
        x, _ = self.subs[2](x, lambda h: (self.ff(h), None))
        return x, cache, kept


class Transformer(Seq2Seq):
    source_keys = ("cross", "src_mask")
    uncached_step = True
    export_formats = ("ctranslate2",)

    def __init__(self, cfg, src_vocab: int, tgt_vocab: int, share_src_tgt: bool = False):
        super().__init__()
        d = cfg.d_model
        self.d_model, self.heads, self.pre_norm = d, cfg.heads, cfg.pre_norm
        self.embeddings(cfg, src_vocab, tgt_vocab, d, share_src_tgt)
        self.register_buffer("pe", sinusoids(cfg.max_positions, d), persistent=False)
        self.drop = nn.Dropout(cfg.dropout)
        self.encoder = nn.ModuleList(EncoderLayer(cfg) for _ in range(cfg.enc_layers))
        self.decoder = nn.ModuleList(DecoderLayer(cfg) for _ in range(cfg.dec_layers))
        # Pre-norm stacks need a final norm; post-norm layers already end in one.
        self.enc_norm = nn.LayerNorm(d) if cfg.pre_norm else nn.Identity()
        self.dec_norm = nn.LayerNorm(d) if cfg.pre_norm else nn.Identity()
        self.generator = nn.Linear(d, tgt_vocab, bias=False)
        self.max_output_len = cfg.max_positions  # decoder positions 0 .. max_positions - 1
        self.attention_layers = cfg.dec_layers
        self._init_weights()
        self.tie_output(cfg.tie_embeddings)

    def _init_weights(self) -> None:
        for name, p in self.named_parameters():
            if p.dim() > 1:
                nn.init.xavier_uniform_(p)
            elif name.endswith("bias"):
                nn.init.zeros_(p)
        init_embeddings((self.src_embed, self.tgt_embed), self.d_model**-0.5)

    def embed(self, table: nn.Embedding, ids: torch.Tensor, offset=0) -> torch.Tensor:
        """Embeddings plus positions from `offset` on (an int, or one per row [N])."""
        x = table(ids) * math.sqrt(self.d_model)
        if isinstance(offset, torch.Tensor):  # (rows that have ended may run past the end)
            at = offset[:, None] + torch.arange(ids.size(1), device=ids.device)
            pe = self.pe[at.clamp_(max=self.pe.size(0) - 1)]
        else:
            pe = self.pe[offset : offset + ids.size(1)]
        return self.drop(x + pe.to(x.dtype))

    def encode(self, src):
        keep = (src != self.pad_id)[:, None, None, :]  # [B, 1, 1, S]: True = attend
        x = self.embed(self.src_embed, src)
        for layer in self.encoder:
            x = layer(x, keep)
        return {"memory": self.enc_norm(x), "src_mask": keep}

    def init_state(self, memory):
        cross = [layer.cross_attn.keys_values(memory["memory"]) for layer in self.decoder]
        return {
            "src_mask": memory["src_mask"],
            "cross": cross,
            "self": [(None, None)] * len(self.decoder),
            "pos": 0,
        }

    def attention_label(self, layer: int) -> str:
        return f"decoder layer {layer}, mean of heads"

    @property
    def supports_streaming(self) -> bool:  # merge_states needs the cached step
        return self.use_cache

    def step(self, prev_tokens, state):
        logits, state, _ = self._step(prev_tokens, state, None)
        return logits, state

    def step_attention(self, prev_tokens, state, layer):
        return self._step(prev_tokens, state, self.check_layer(layer) % len(self.decoder))

    def _step(self, prev_tokens, state, layer: int | None):
        """Logits, the next state and decoder `layer`'s cross-attention weights [N, S] (None
        where `layer` is None)."""
        if not self.use_cache:
            return self._step_uncached(prev_tokens, state, layer)
        x = self.embed(self.tgt_embed, prev_tokens[:, None], offset=state["pos"])
        mask, caches = state.get("self_mask"), state["self"]  # rows at different steps
        if mask is not None:  # (merge_states): the cached columns no row needs are dropped
            width = min(int(state["pos"].max()), mask.size(-1))
            mask = torch.cat(
                [mask[..., mask.size(-1) - width :], mask.new_ones(mask.shape[:-1] + (1,))], -1
            )
            caches = [
                (k[:, :, k.size(2) - width :], v[:, :, v.size(2) - width :])
                if k is not None
                else (k, v)
                for k, v in caches
            ]
        new_caches, kept = [], None
        for i, (block, kv, cache) in enumerate(zip(self.decoder, state["cross"], caches)):
            x, cache, seen = block(
                x, kv, state["src_mask"], cache=cache, self_mask=mask, keep_weights=i == layer
            )
            new_caches.append(cache)
            kept = seen if i == layer else kept
        logits = self.generator(self.dec_norm(x[:, 0]))
        new = {**state, "self": new_caches, "pos": state["pos"] + 1}
        if mask is not None:
            new["self_mask"] = mask
        return logits, new, None if kept is None else kept[:, -1]

    def merge_states(self, states):
        """Rows at different steps: positions become one per row, and the self-attention
        caches are padded at the start to the longest, with a mask of each row's own keys;
        columns that no row needs any more are dropped."""
        if not self.use_cache:
            raise NotImplementedError("merge_states needs the cached step")
        n = [s["src_mask"].size(0) for s in states]
        pos = [
            s["pos"]
            if isinstance(s["pos"], torch.Tensor)
            else torch.full((r,), s["pos"], device=s["src_mask"].device)
            for s, r in zip(states, n)
        ]
        pos = torch.cat(pos)
        width = int(pos.max()) if pos.numel() else 0
        own = torch.arange(width, device=pos.device) >= width - pos[:, None]  # [N, width]
        caches = []
        for layer in range(len(self.decoder)):
            kv = []
            for part in (0, 1):
                rows = [s["self"][layer][part] for s in states]
                like = next((r for r in rows if r is not None), None)
                if like is None:
                    kv.append(None)
                    continue
                shape = (0, like.size(1), width, like.size(3))
                rows = [
                    like.new_zeros((m, *shape[1:])) if r is None else r[:, :, -width:]
                    for r, m in zip(rows, n)
                ]
                kv.append(torch.cat([pad_to(r, shape, left=True) for r in rows]))
            caches.append(tuple(kv))
        rest = [
            {k: v for k, v in s.items() if k not in ("self", "pos", "self_mask")} for s in states
        ]
        return {
            **join_rows(rest),
            "self": caches,
            "pos": pos,
            "self_mask": own[:, None, None, :],
        }

    def place_states(self, state, rows, new):
        """The new rows start at position 0 with none of the cached keys their own (what the
        cache holds in those rows stays, masked out)."""
        if new["pos"] != 0 or state["self"][0][0] is None:
            raise NotImplementedError("place_states puts a fresh state into one that has stepped")
        n, width = state["src_mask"].size(0), state["self"][0][0].size(2)
        pos, mask = state["pos"], state.get("self_mask")
        if not isinstance(pos, torch.Tensor):
            pos = torch.full((n,), pos, device=rows.device)
            mask = torch.ones((n, 1, 1, width), dtype=torch.bool, device=rows.device)
        pos, mask = pos.index_fill(0, rows, 0), mask.index_fill(0, rows, False)
        keep = ("self", "pos", "self_mask")
        rest = put_rows(
            {k: v for k, v in state.items() if k not in keep},
            rows,
            {k: v for k, v in new.items() if k not in keep},
        )
        return {**rest, "self": state["self"], "pos": pos, "self_mask": mask}

    def _step_uncached(self, prev_tokens, state, layer: int | None):
        """The whole prefix again at every step: the reference the cache must agree with."""
        prefix = prev_tokens[:, None]
        if "prefix" in state:
            prefix = torch.cat([state["prefix"], prefix], 1)
        x = self.embed(self.tgt_embed, prefix)
        kept = None
        for i, (block, kv) in enumerate(zip(self.decoder, state["cross"])):
            x, _, seen = block(x, kv, state["src_mask"], keep_weights=i == layer)
            kept = seen if i == layer else kept
        logits = self.generator(self.dec_norm(x[:, -1]))
        new = {**state, "prefix": prefix, "pos": state["pos"] + 1}
        return logits, new, None if kept is None else kept[:, -1]

    def export_spec(self, fmt: str):
        if fmt not in self.export_formats:
            return super().export_spec(fmt)
        from translator.models.transformer_ct2 import transformer_spec

        return transformer_spec(self)

    def flops_per_token(self) -> tuple[int, int]:
        """6 x parameters (forward and backward matrix products) per token on each side;
        the attention score products, which grow with length, are not counted."""
        enc = sum(p.numel() for p in self.encoder.parameters())
        dec = sum(p.numel() for p in self.decoder.parameters())
        return 6 * enc, 6 * (dec + self.generator.weight.numel())

    def forward(self, src, tgt_in):
        memory = self.encode(src)
        x = self.embed(self.tgt_embed, tgt_in)
        for layer in self.decoder:
            kv = layer.cross_attn.keys_values(memory["memory"])
            x, _, _ = layer(x, kv, memory["src_mask"])
        return self.generator(self.dec_norm(x))


FAMILY = Family(
    "transformer", TransformerConfig, Transformer, "Vaswani et al. (2017)", title="Transformer"
)
