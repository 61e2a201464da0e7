"""The Transformer (models/transformer.py) as a CTranslate2 model specification.

CTranslate2's converter API (`ctranslate2.converters.Converter`) saves any filled
`ctranslate2.specs.TransformerSpec`; this module fills one from our modules, so the
export is CTranslate2's own format, written by CTranslate2's own code. What the two
models have in common, and where ours is named differently:

    ours                                        the spec
    src_embed / tgt_embed (x sqrt(d_model))     encoder.embeddings[0] / decoder.embeddings,
                                                scale_embeddings (sqrt of the depth)
    pe: the sinusoid table of model.positions   position_encodings.encodings: our table itself,
      (models/positions.py), row p for the        so no convention has to match; CTranslate2
      token at position p (m2m100: fairseq's      reads row p at position p, and its own M2M100
      row p + 2, its offset already applied)      converter drops fairseq's first 2 rows alike
    Attention.qkv: one Linear, rows [q; k; v]   self_attention.linear[0] (fused the same way)
    Attention.q, Attention.kv ([k; v]), out     attention.linear[0], [1], [2]
    Sublayer.norm, before (pre-norm) or after   layer_norm of that sublayer; spec.pre_norm
      the residual (post-norm)
    enc_norm / dec_norm (pre-norm only)         encoder.layer_norm / decoder.layer_norm
    FeedForward: Linear, ReLU/GELU/SiLU, Linear ffn.linear_0, Activation, ffn.linear_1
    generator (bias: logits_bias; tied or not)  decoder.projection (identical arrays are
                                                stored once by CTranslate2)
    nn.LayerNorm eps                            config.layer_norm_epsilon

Scaled dot-product attention (1/sqrt(d_head) on the queries) and the key padding mask
are CTranslate2's defaults, as ours.

Alignments (return_attention) read the spec's alignment_layer, averaging its first
alignment_heads heads: our alignment layer with all its heads, or, for a model with an
alignment head (guided alignment), that head alone, moved to the front of its layer.
"""

from __future__ import annotations

import numpy as np
from torch import nn


def _array(t) -> np.ndarray:
    return t.detach().float().cpu().numpy().copy()


def _linear(spec, module: nn.Linear) -> None:
    spec.weight = _array(module.weight)
    if module.bias is not None:
        spec.bias = _array(module.bias)


def _norm(spec, module: nn.LayerNorm) -> None:
    spec.gamma, spec.beta = _array(module.weight), _array(module.bias)


def alignment_record(model) -> dict:
    """The decoder layer and the number of its heads (from the first) whose attention the
    export returns for alignments (module docstring)."""
    return {"layer": model.alignment_layer,
            "heads": model.heads if model.alignment_head is None else 1}  # fmt: skip


def transformer_spec(model):
    """A filled `ctranslate2.specs.TransformerSpec` (vocabularies are the caller's)."""
    from ctranslate2.specs import common_spec
    from ctranslate2.specs.transformer_spec import TransformerSpec

    activation = {"relu": "RELU", "gelu": "GELU", "swish": "SWISH"}[model.activation]
    align = alignment_record(model)
    spec = TransformerSpec.from_config(
        (len(model.encoder), len(model.decoder)),
        model.heads,
        pre_norm=model.pre_norm,
        no_final_norm=model.pre_norm and not model.final_norm,
        activation=getattr(common_spec.Activation, activation),
        alignment_layer=align["layer"],
        alignment_heads=align["heads"],
    )
    norms = [m for m in model.modules() if isinstance(m, nn.LayerNorm)]
    spec.config.layer_norm_epsilon = float(norms[0].eps) if norms else 1e-5
    enc, dec = spec.encoder, spec.decoder
    pe = _array(model.pe)
    enc.embeddings[0].weight = _array(model.src_embed.weight)
    dec.embeddings.weight = _array(model.tgt_embed.weight)
    enc.scale_embeddings = dec.scale_embeddings = model.scale != 1.0  # x sqrt(d_model)
    enc.position_encodings.encodings = pe
    dec.position_encodings.encodings = pe
    for layer_spec, layer in zip(enc.layer, model.encoder):
        att = layer_spec.self_attention
        _linear(att.linear[0], layer.attn.qkv)
        _linear(att.linear[1], layer.attn.out)
        _norm(att.layer_norm, layer.sub1.norm)
        _feed_forward(layer_spec.ffn, layer.ff, layer.sub2.norm)
    for layer_spec, layer in zip(dec.layer, model.decoder):
        att = layer_spec.self_attention
        _linear(att.linear[0], layer.self_attn.qkv)
        _linear(att.linear[1], layer.self_attn.out)
        _norm(att.layer_norm, layer.subs[0].norm)
        cross = layer_spec.attention
        _linear(cross.linear[0], layer.cross_attn.q)
        _linear(cross.linear[1], layer.cross_attn.kv)
        _linear(cross.linear[2], layer.cross_attn.out)
        _norm(cross.layer_norm, layer.subs[1].norm)
        _feed_forward(layer_spec.ffn, layer.ff, layer.subs[2].norm)
    if model.final_norm:
        _norm(enc.layer_norm, model.enc_norm)
        _norm(dec.layer_norm, model.dec_norm)
    _linear(dec.projection, model.generator)
    if model.alignment_head:
        _head_first(dec.layer[model.alignment_layer].attention, model.alignment_head, model.heads)
    return spec


def _head_first(cross, head: int, heads: int) -> None:
    """Head `head` of a cross-attention spec swapped with head 0 (the query, key and value
    rows of each and the output columns that read them): the same function, its head first."""
    d = cross.linear[0].weight.shape[0]
    swapped = list(range(heads))
    swapped[0], swapped[head] = head, 0
    order = np.arange(d).reshape(heads, d // heads)[swapped].reshape(-1)
    kv = np.concatenate([order, d + order])
    for spec, rows in ((cross.linear[0], order), (cross.linear[1], kv)):
        spec.weight = spec.weight[rows].copy()
        if isinstance(getattr(spec, "bias", None), np.ndarray):
            spec.bias = spec.bias[rows].copy()
    cross.linear[2].weight = cross.linear[2].weight[:, order].copy()


def _feed_forward(spec, ff: nn.Sequential, norm: nn.LayerNorm) -> None:
    first, second = (m for m in ff if isinstance(m, nn.Linear))
    _linear(spec.linear_0, first)
    _linear(spec.linear_1, second)
    _norm(spec.layer_norm, norm)
