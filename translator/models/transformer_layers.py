"""The Transformer's layers (models/transformer.py builds the stacks from them): multi-head
attention, the position-wise feed-forward block and the residual sublayer around each."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

# The feed-forward block's nonlinearity (model.activation); swish is SiLU, x * sigmoid(x),
# and gelu the exact (erf) one, as Hugging Face's "gelu" and "swish".
ACTIVATIONS = {"relu": nn.ReLU, "gelu": nn.GELU, "swish": nn.SiLU}


def weights(q, k, mask=None, softmax_dtype=None) -> torch.Tensor:
    """softmax(Q K^T / sqrt(d_k)) [B, H, Lq, Lk], keys where `mask` is False left out; the
    softmax in `softmax_dtype` where given, the result in q's."""
    scores = q @ k.transpose(-1, -2) * q.size(-1) ** -0.5
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    return scores.softmax(-1, dtype=softmax_dtype).to(q.dtype)


def one_query(q, k, v, mask=None) -> torch.Tensor:
    """Attention of one query position (a decoding step) as two batched products, which a
    CPU runs faster than the fused kernel at a decoding step's key lengths."""
    return weights(q, k, mask) @ v


def by_products(q, k, v, mask=None, causal=False, dropout=0.0) -> torch.Tensor:
    """What scaled_dot_product_attention computes, as two batched products with a float32
    softmax between them (train.attention: products), which compiling fuses."""
    if causal:  # the upper-left triangle, as the fused kernels' is_causal
        keep = torch.ones(q.size(2), k.size(2), dtype=torch.bool, device=q.device).tril()
        mask = keep if mask is None else mask & keep
    w = weights(q, k, mask, torch.float32)
    return (F.dropout(w, dropout) if dropout else w) @ v


class Attention(nn.Module):
    """Multi-head attention through scaled_dot_product_attention (flash path on GPU), or
    through two matrix products where `products` is set (train.attention)."""

    products = False

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
        self.align_head: int | None = None  # see forward_cross

    def split(self, x: torch.Tensor) -> torch.Tensor:  # [B, L, D] -> [B, H, L, D/H]
        b, n, d = x.shape
        return x.view(b, n, self.heads, d // self.heads).transpose(1, 2)

    def keys_values(self, memory: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        k, v = self.kv(memory).chunk(2, dim=-1)
        return self.split(k), self.split(v)

    def attend(self, q, k, v, mask=None, causal=False) -> torch.Tensor:
        p = self.dropout_p if self.training else 0.0
        if q.size(2) == 1 and not self.training and q.device.type == "cpu":
            y = one_query(q, k, v, mask)
        elif self.products:
            y = by_products(q, k, v, mask, causal, p)
        else:
            y = F.scaled_dot_product_attention(
                q, k, v, attn_mask=mask, dropout_p=p, is_causal=causal
            )
        b, h, n, dh = y.shape
        return self.out(y.transpose(1, 2).reshape(b, n, h * dh))

    def forward_self(self, x, mask=None, causal=False, cache=None, spare=False):
        """With `cache`, one new position appended to the cached prefix (`mask`: which cached
        positions are a row's own, where rows differ); with `spare`, the cache's last
        position is free and takes the new one in place (models/transformer.py
        reorder_state leaves it), saving the copy a concatenation makes."""
        q, k, v = (self.split(t) for t in self.qkv(x).chunk(3, dim=-1))
        if cache is not None:
            if spare:
                cache[0][:, :, -1:] = k
                cache[1][:, :, -1:] = v
                k, v = cache
            elif cache[0] is not None:
                k, v = torch.cat([cache[0], k], 2), torch.cat([cache[1], v], 2)
            return self.attend(q, k, v, mask), (k, v)
        return self.attend(q, k, v, mask, causal), None

    def forward_cross(self, x, kv, mask, keep_weights=False):
        """The attention's output and, with `keep_weights`, its weights [B, Lq, Lk] (the same
        softmax again): head `align_head`'s alone where that is set (the head that guided
        alignment trains), else the mean of the heads; without `keep_weights`, None."""
        q = self.split(self.q(x))
        kept = None
        if keep_weights and self.align_head is not None:
            h = self.align_head
            kept = weights(q[:, h : h + 1], kv[0][:, h : h + 1], mask)[:, 0]
        elif keep_weights:
            kept = weights(q, kv[0], mask).mean(1)
        return self.attend(q, kv[0], kv[1], mask), kept


class FeedForward(nn.Sequential):
    def __init__(self, d: int, ff: int, dropout: float, activation: str = "relu"):
        act = ACTIVATIONS[activation]()
        super().__init__(nn.Linear(d, ff), act, nn.Dropout(dropout), nn.Linear(ff, d))


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
        self.ff = FeedForward(d, cfg.ff_dim, cfg.dropout, cfg.activation)
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
        self.ff = FeedForward(d, cfg.ff_dim, cfg.dropout, cfg.activation)
        self.subs = nn.ModuleList(Sublayer(d, cfg.dropout, cfg.pre_norm) for _ in range(3))

    def forward(
        self, x, cross_kv, src_mask, cache=None, self_mask=None, keep_weights=False, spare=False
    ):
        """The layer's output, its self-attention cache, and the cross-attention weights
        [B, L, S] where `keep_weights` asks for them (else None); `spare`: forward_self's."""
        causal = cache is None
        x, cache = self.subs[0](
            x, lambda h: self.self_attn.forward_self(h, self_mask, causal, cache, spare)
        )
        x, kept = self.subs[1](
            x, lambda h: self.cross_attn.forward_cross(h, cross_kv, src_mask, keep_weights)
        )
        x, _ = self.subs[2](x, lambda h: (self.ff(h), None))
        return x, cache, kept
