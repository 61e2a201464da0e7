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
from typing import Literal

import torch
from torch import nn

from translator.config.base import ModelConfig, NonNegative, Positive, Probability
from translator.errors import UserError
from translator.models.base import Seq2Seq, init_embeddings, join_rows, pad_to, put_rows
from translator.models.family import Family
from translator.models.positions import sinusoids
from translator.models.transformer_layers import (  # noqa: F401 (one_query: tests take it here)
    DecoderLayer,
    EncoderLayer,
    one_query,
)

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
    # A LayerNorm at the end of each pre-norm stack (post-norm layers already end in one).
    final_norm: bool = True
    activation: Literal["relu", "gelu", "swish"] = "relu"  # the feed-forward nonlinearity
    embed_scale: bool = True  # multiply the embeddings by sqrt(d_model) (sec. 3.4)
    # The sinusoid table (models/positions.py): interleaved (sin at even dimensions, cos at
    # odd), halves (sin in the first half, cos in the second: Marian's layout) or m2m100
    # (halves with fairseq's frequencies, positions from 2: M2M100's and NLLB's layout).
    positions: Literal["interleaved", "halves", "m2m100"] = "interleaved"
    logits_bias: bool = False  # a learnt bias added to the output logits
    # One embedding table for source and target: null decides by the vocabulary (one
    # table where it is joint and tie_embeddings holds); true needs equal vocabulary sizes.
    share_embeddings: bool | None = None
    # The decoder layer whose cross-attention gives word alignments (negative: counted from
    # the end, the first at most; -2: the penultimate, as fairseq's transformer_align).
    alignment_layer: int = -2
    # The head of that layer that train.guided_alignment trains to align and that alignments
    # then read alone (0 is usual); null: alignments read the mean of the layer's heads.
    alignment_head: NonNegative | None = None

    def problems(self) -> Iterator[tuple[str, str]]:
        yield from super().problems()
        # Without a decoder layer no cross-attention reads the source, so every output would
        # be the same whatever the input; no encoder layer leaves the embeddings to attend to.
        if self.dec_layers < 1:
            yield "dec_layers", "must be at least 1 (its cross-attention reads the source)"
        if self.d_model % self.heads:
            yield "d_model", f"must be divisible by model.heads ({self.heads})"
        if self.dec_layers and self.alignment_layer >= self.dec_layers:
            yield "alignment_layer", f"must be a decoder layer (0 to {self.dec_layers - 1})"
        if self.alignment_head is not None and self.alignment_head >= self.heads:
            yield "alignment_head", f"must be a head of the layer (0 to {self.heads - 1})"


class Transformer(Seq2Seq):
    source_keys = ("cross", "src_mask")
    uncached_step = True
    compile_regions = ("encoder", "decoder")
    export_formats = ("ctranslate2",)

    def __init__(self, cfg, src_vocab: int, tgt_vocab: int, share_src_tgt: bool = False):
        super().__init__()
        d = cfg.d_model
        self.d_model, self.heads, self.pre_norm = d, cfg.heads, cfg.pre_norm
        self.activation = cfg.activation  # (the CTranslate2 spec reads it)
        self.scale = math.sqrt(d) if cfg.embed_scale else 1.0
        if cfg.share_embeddings and src_vocab != tgt_vocab:
            raise UserError(
                f"model.share_embeddings: the source vocabulary has {src_vocab} entries and "
                f"the target {tgt_vocab}; one table needs one vocabulary"
            )
        self.embeddings(cfg, src_vocab, tgt_vocab, d, share_src_tgt, cfg.share_embeddings)
        self.register_buffer("pe", sinusoids(cfg.max_positions, d, cfg.positions), persistent=False)
        self.drop = nn.Dropout(cfg.dropout)
        self.encoder = nn.ModuleList(EncoderLayer(cfg) for _ in range(cfg.enc_layers))
        self.decoder = nn.ModuleList(DecoderLayer(cfg) for _ in range(cfg.dec_layers))
        # Pre-norm stacks need a final norm; post-norm layers already end in one.
        self.final_norm = cfg.pre_norm and cfg.final_norm
        self.enc_norm = nn.LayerNorm(d) if self.final_norm else nn.Identity()
        self.dec_norm = nn.LayerNorm(d) if self.final_norm else nn.Identity()
        self.generator = nn.Linear(d, tgt_vocab, bias=cfg.logits_bias)
        self.max_output_len = cfg.max_positions  # decoder positions 0 .. max_positions - 1
        self.attention_layers = cfg.dec_layers
        # the guided head, where there is one (transformer_layers.Attention.forward_cross)
        self.alignment_head = cfg.alignment_head
        layer = cfg.alignment_layer
        self._alignment_layer = layer if layer >= 0 else max(0, cfg.dec_layers + layer)
        if cfg.dec_layers:
            self.decoder[self._alignment_layer].cross_attn.align_head = cfg.alignment_head
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
        x = table(ids) * self.scale
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

    @property
    def alignment_layer(self) -> int | None:
        """The decoder layer (0-based) whose cross-attention gives word alignments: the
        configured one (model.alignment_layer), its guided head alone where it has one."""
        return self._alignment_layer if self.attention_layers else None

    def attention_label(self, layer: int) -> str:
        if layer % max(1, len(self.decoder)) == self._alignment_layer and (
            self.alignment_head is not None
        ):
            return f"decoder layer {layer}, head {self.alignment_head} (the alignment head)"
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
        spare = bool(state.get("spare"))
        mask = state.get("self_mask")  # rows at different steps
        if mask is not None:
            state, spare = filled(state), False
        caches = state["self"]
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
            x, cache, seen = block(x, kv, state["src_mask"], cache, mask, i == layer, spare)
            new_caches.append(cache)
            kept = seen if i == layer else kept
        logits = self.generator(self.dec_norm(x[:, 0]))
        new = {**state, "self": new_caches, "pos": state["pos"] + 1, "spare": False}
        if mask is not None:
            new["self_mask"] = mask
        return logits, new, None if kept is None else kept[:, -1]

    def reorder_state(self, state, indices, same_sentences=False):
        """Rows `indices`, the self-attention caches gathered into buffers one position
        longer whose last position the next step fills in place (forward_self's `spare`):
        one copy of the caches a step instead of a gather's and a concatenation's."""
        caches = state.get("self") if isinstance(state, dict) else None
        # (writing into a buffer is for decoding: under autograd the rows are selected as is)
        if not caches or caches[0][0] is None or state.get("spare") or torch.is_grad_enabled():
            return super().reorder_state(state, indices, same_sentences)
        rest = {k: v for k, v in state.items() if k != "self"}
        rest = super().reorder_state(rest, indices, same_sentences)
        kept = [tuple(with_spare(t, indices) for t in kv) for kv in caches]
        return {**rest, "self": kept, "spare": True}

    def merge_states(self, states):
        """Rows at different steps: positions become one per row, and the self-attention
        caches are padded at the start to the longest, with a mask of each row's own keys;
        columns that no row needs any more are dropped."""
        if not self.use_cache:
            raise NotImplementedError("merge_states needs the cached step")
        states = [filled(s) for s in states]
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
            {k: v for k, v in s.items() if k not in ("self", "pos", "self_mask", "spare")}
            for s in states
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
        state = filled(state)
        if new["pos"] != 0 or state["self"][0][0] is None:
            raise NotImplementedError("place_states puts a fresh state into one that has stepped")
        n, width = state["src_mask"].size(0), state["self"][0][0].size(2)
        pos, mask = state["pos"], state.get("self_mask")
        if not isinstance(pos, torch.Tensor):
            pos = torch.full((n,), pos, device=rows.device)
            mask = torch.ones((n, 1, 1, width), dtype=torch.bool, device=rows.device)
        pos, mask = pos.index_fill(0, rows, 0), mask.index_fill(0, rows, False)
        keep = ("self", "pos", "self_mask", "spare")
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

    def forward(self, src, tgt_in, alignment: bool = False):
        """The logits [B, T, V]; with `alignment`, also the alignment layer's cross-attention
        weights [B, T, S] (its guided head's where it has one), which guided training reads."""
        memory = self.encode(src)
        x = self.embed(self.tgt_embed, tgt_in)
        kept = None
        for i, layer in enumerate(self.decoder):
            kv = layer.cross_attn.keys_values(memory["memory"])
            keep = alignment and i == self._alignment_layer
            x, _, seen = layer(x, kv, memory["src_mask"], keep_weights=keep)
            kept = seen if keep else kept
        logits = self.generator(self.dec_norm(x))
        return (logits, kept) if alignment else logits


FAMILY = Family(
    "transformer", TransformerConfig, Transformer, "Vaswani et al. (2017)", title="Transformer"
)


def with_spare(cache: torch.Tensor, rows: torch.Tensor) -> torch.Tensor:
    """Rows `rows` of a cache [N, H, L, D] in a buffer [len(rows), H, L + 1, D] whose last
    position is left free for the next step."""
    n, h, length, d = cache.shape
    buf = cache.new_empty((rows.numel(), h, length + 1, d))
    torch.index_select(cache, 0, rows, out=buf[:, :, :length])
    return buf


def filled(state: dict) -> dict:
    """`state` without the free cache position reorder_state leaves (views, no copy)."""
    if not state.get("spare"):
        return state
    out = {k: v for k, v in state.items() if k != "spare"}
    out["self"] = [(k[:, :, :-1], v[:, :, :-1]) for k, v in state["self"]]
    return out
