"""`translator export --format huggingface`: a checkpoint as a folder that transformers loads
with its own classes (`AutoModelForSeq2SeqLM.from_pretrained(FOLDER)` and its tokenizer).

    translator config                        Hugging Face class
    pre_norm false, positions halves         MarianMTModel (post-norm, no final norm)
    pre_norm true, final_norm true,          M2M100ForConditionalGeneration
      positions m2m100, one vocabulary,
      no logits bias (or a zero one)

Any other model is refused in one line naming the keys that differ. The weights are the
inverse of the import (pretrained/marian.py): fused qkv rows [q; k; v] and cross-attention
kv rows [k; v] are split, layers renamed. The tokenizer is transformers' MarianTokenizer
(source.spm, target.spm, vocab.json [+ target_vocab.json]) for both classes: it encodes a
line as translator does, pieces then </s>.

Ids: an imported Marian model gets its original ids back (the checkpoint's `source` keeps
translator id -> Marian id per side, and the original config.json), so the folder computes
what the original did. Any other model keeps translator's order (<pad> 0, <unk> 1, <s> 2,
</s> 3, then sentencepiece's pieces) and starts decoding from <s>; for M2M100, whose
positions are counted from its pad id (fairseq's 1), the first four are put in fairseq's
order (<s> 0, <pad> 1, </s> 2, <unk> 3). Target-language tags (<2fr>) are written as
Marian's >>fr<<, which MarianTokenizer takes from the start of a line.

The folder is built beside its final place and renamed into place whole
(fileio/outputs.py), and only a folder translator wrote is replaced.
"""

from __future__ import annotations

from pathlib import Path

import torch

from translator.engines.export_settings import exported_config
from translator.errors import UserError, optional_import
from translator.fileio import usual_mode
from translator.fileio.outputs import building, claim_folder
from translator.models.checkpoint import Checkpoint
from translator.pretrained.hf_files import (
    write_card,
    write_json,
    write_nllb_tokenizer,
    write_tokenizer,
)
from translator.specials import BOS, EOS, PAD, UNK

MARIAN, M2M100 = "MarianMTModel", "M2M100ForConditionalGeneration"
# translator id -> fairseq's id for the four specials (the rest keep theirs)
FAIRSEQ = {BOS: 0, PAD: 1, EOS: 2, UNK: 3}


def hf_class(model_cfg) -> str:
    """The class that computes this model, or a UserError naming the keys that differ."""
    m = model_cfg
    if m.type != "transformer":
        raise UserError(
            f"model.type {m.type}: only Transformer models have a Hugging Face class "
            f"({MARIAN}: model.pre_norm false, model.positions halves; {M2M100}: "
            "model.pre_norm true, model.final_norm true, model.positions m2m100)"
        )
    if not m.pre_norm:
        if m.positions != "halves":
            raise UserError(
                f"model.positions {m.positions}: a post-norm model exports as {MARIAN}, "
                "which needs model.positions halves (Marian's sinusoid layout)"
            )
        return MARIAN
    wrong = []
    if not m.final_norm:
        wrong.append("model.final_norm false (needs true)")
    if m.positions != "m2m100":
        wrong.append(f"model.positions {m.positions} (needs m2m100)")
    if wrong:
        raise UserError(
            f"a pre-norm model exports as {M2M100}, and this one differs: {'; '.join(wrong)} "
            f"(a post-norm model with model.positions halves exports as {MARIAN})",
            "these keys are fixed at training: set them in the config of the next run, as "
            "configs/transformer.yaml does; CTranslate2 exports take the model as it is",
        )
    return M2M100


# ---------------------------------------------------------------- weights


def layer_tensors(sd: dict, enc_layers: int, dec_layers: int, d: int) -> dict:
    """translator's layers under transformers' names (MarianMTModel's and M2M100's agree)."""
    out = {}

    def put(hf: str, ours: str) -> None:
        out[f"{hf}.weight"], out[f"{hf}.bias"] = sd[f"{ours}.weight"], sd[f"{ours}.bias"]

    def split(names: list[str], ours: str) -> None:
        w, b = sd[f"{ours}.weight"], sd[f"{ours}.bias"]
        for i, hf in enumerate(names):
            out[f"{hf}.weight"], out[f"{hf}.bias"] = w[i * d : (i + 1) * d], b[i * d : (i + 1) * d]

    for i in range(enc_layers):
        hf, ours = f"model.encoder.layers.{i}", f"encoder.{i}"
        split([f"{hf}.self_attn.{p}_proj" for p in "qkv"], f"{ours}.attn.qkv")
        put(f"{hf}.self_attn.out_proj", f"{ours}.attn.out")
        put(f"{hf}.self_attn_layer_norm", f"{ours}.sub1.norm")
        put(f"{hf}.fc1", f"{ours}.ff.0")
        put(f"{hf}.fc2", f"{ours}.ff.3")
        put(f"{hf}.final_layer_norm", f"{ours}.sub2.norm")
    for i in range(dec_layers):
        hf, ours = f"model.decoder.layers.{i}", f"decoder.{i}"
        split([f"{hf}.self_attn.{p}_proj" for p in "qkv"], f"{ours}.self_attn.qkv")
        put(f"{hf}.self_attn.out_proj", f"{ours}.self_attn.out")
        put(f"{hf}.self_attn_layer_norm", f"{ours}.subs.0.norm")
        put(f"{hf}.encoder_attn.q_proj", f"{ours}.cross_attn.q")
        split([f"{hf}.encoder_attn.{p}_proj" for p in "kv"], f"{ours}.cross_attn.kv")
        put(f"{hf}.encoder_attn.out_proj", f"{ours}.cross_attn.out")
        put(f"{hf}.encoder_attn_layer_norm", f"{ours}.subs.1.norm")
        put(f"{hf}.fc1", f"{ours}.ff.0")
        put(f"{hf}.fc2", f"{ours}.ff.3")
        put(f"{hf}.final_layer_norm", f"{ours}.subs.2.norm")
    return out


def reorder(table: torch.Tensor, ids: list[int]) -> torch.Tensor:
    """Rows in the exported id order: row ids[i] is translator's row i. Where translator's
    <s> shares an exported id with another of ours (an imported model's start: Marian's
    <pad>, M2M100's </s>), that other's row is the id's own."""
    out = table.new_zeros((max(ids) + 1, *table.shape[1:]))
    for i in [BOS, *(i for i in range(len(ids)) if i != BOS)]:
        out[ids[i]] = table[i]
    return out


def table_tensors(model, sd: dict, src_ids: list, tgt_ids: list, cls: str) -> dict:
    """Embeddings, output layer, (Marian) logits bias and (M2M100) the stacks' final norms,
    rows in the exported order."""
    src = reorder(sd["src_embed.weight"], src_ids)
    tgt = reorder(sd["tgt_embed.weight"], tgt_ids)
    out = {
        "model.encoder.embed_tokens.weight": src,
        "model.decoder.embed_tokens.weight": tgt,
        "lm_head.weight": reorder(sd["generator.weight"], tgt_ids),
    }
    if model.src_embed is model.tgt_embed or cls == M2M100:
        # (an untied M2M100 reads its stacks' own tables; `shared` is only what it would tie)
        out["model.shared.weight"] = tgt
    bias = reorder(sd.get("generator.bias", torch.zeros(len(tgt_ids))), tgt_ids)
    if cls == MARIAN:
        out["final_logits_bias"] = bias[None]
        return out
    if bias.any():
        raise UserError(
            f"model.logits_bias: the model's output bias is not zero, and {M2M100} has none"
        )
    for stack in ("encoder", "decoder"):
        for kind in ("weight", "bias"):
            out[f"model.{stack}.layer_norm.{kind}"] = sd[f"{stack[:3]}_norm.{kind}"]
    return out


# ---------------------------------------------------------------- ids and vocabularies


def original_ids(ckpt: Checkpoint, sd: dict, cls: str) -> tuple[list, list] | None:
    """(source, target) translator id -> released id of a model imported from a folder of
    class `cls`, or None where the ids are translator's own, or where fine-tuning has moved
    translator's <s> row away from the released row it shares (Marian's <pad>, M2M100's
    </s>): one row could not be both."""
    source = ckpt.source or {}
    ids = source.get("ids")
    kind = {MARIAN: "huggingface-marian", M2M100: "huggingface-m2m100"}[cls]
    if source.get("format") != kind or not isinstance(ids, dict):
        return None
    src, tgt = ids.get("src"), ids.get("tgt") or ids.get("src")
    if not isinstance(src, list) or not isinstance(tgt, list):
        return None
    table = sd["tgt_embed.weight"]
    if any(tgt[i] == tgt[BOS] and not torch.equal(table[i], table[BOS]) for i in (PAD, EOS)):
        return None
    return src, tgt


def own_ids(size: int, cls: str) -> list[int]:
    """translator id -> exported id where translator's order is kept."""
    ids = list(range(size))
    if cls == M2M100:
        for ours, theirs in FAIRSEQ.items():
            ids[ours] = theirs
    return ids


def _check_output(output: Path) -> None:
    if output.exists() and not output.is_dir():
        raise UserError(f"--output {output} is a file; give a folder to write the export to")
    if output.is_dir():
        claim_folder(output, "--output", None, "export")


def export_huggingface(checkpoint: Path, output: Path, overrides: list[str] | None) -> str:
    """Write `checkpoint` as a transformers folder at `output`; the line to print.
    `overrides` (KEY=VALUE) change the saved config's decode and data settings that the
    folder's generation_config.json and tokenizer_config.json carry."""
    checkpoint, output = Path(checkpoint), Path(output)
    ckpt = Checkpoint.load(checkpoint)
    cfg, tokenizer, model = ckpt.build(str(checkpoint))
    # --set changes what the folder's configs say about decoding and languages
    cfg = exported_config(ckpt, cfg, checkpoint, overrides)
    m, sd = cfg.model, {k: v.detach().float() for k, v in model.state_dict().items()}
    try:
        cls = hf_class(m)
        found = original_ids(ckpt, sd, cls)
        src_ids, tgt_ids = found or (
            own_ids(tokenizer.src_vocab_size, cls),
            own_ids(tokenizer.tgt_vocab_size, cls),
        )
        if cls == M2M100 and src_ids != tgt_ids:
            raise UserError(f"{M2M100} has one vocabulary for both sides, and this model has two")
        tensors = {
            **table_tensors(model, sd, src_ids, tgt_ids, cls),
            **layer_tensors(sd, m.enc_layers, m.dec_layers, m.d_model),
        }
    except UserError as err:
        raise UserError(f"{checkpoint}: cannot be exported to huggingface: {err.message}") from None
    safetensors = optional_import("safetensors.torch", "pretrained", "Hugging Face exports")
    _check_output(output)
    tensors = {k: v.clone().contiguous() for k, v in tensors.items()}  # no shared storage
    ids = {
        "pad_token_id": tgt_ids[PAD],
        "eos_token_id": tgt_ids[EOS],
        "decoder_start_token_id": tgt_ids[BOS],
        "forced_eos_token_id": tgt_ids[EOS],
    }
    # what translator's search never outputs; an imported model's <s> is the released start
    # (Marian's <pad>, banned as such; M2M100's </s>, which must stay)
    banned = [PAD, *model.never_output] + [UNK] * (not cfg.decode.allow_unk)
    banned = {tgt_ids[i] for i in banned + [BOS] * (found is None)}
    forced = {}
    if found is not None and cls == M2M100:  # the target language's code, forced first
        code = (ckpt.source.get("languages") or {}).get(cfg.data.tgt_lang)
        forced = {} if code is None else {"forced_bos_token_id": tgt_ids[code]}
    with building(output) as tmp:
        config = model_config(cls, cfg, src_ids, tgt_ids, model, ids)
        if found is not None:  # the original's, with what translator holds in its place
            original = ckpt.source.get("config", {})
            config = {**original, **config,
                      **{k: original[k] for k in ORIGINAL_ONLY if k in original}}  # fmt: skip
        write_json(tmp / "config.json", config)
        write_json(tmp / "generation_config.json", generation(cfg, {**ids, **forced}, banned))
        safetensors.save_file(tensors, str(tmp / "model.safetensors"), {"format": "pt"})
        usual_mode(tmp / "model.safetensors")  # (safetensors writes it 0600)
        if found is not None and cls == M2M100:
            write_nllb_tokenizer(tmp, tokenizer, ckpt.source, cfg.data)
        else:
            write_tokenizer(tmp, tokenizer, src_ids, tgt_ids, cfg, found is None)
        write_card(tmp, ckpt, cfg, cls)
    size = sum(p.stat().st_size for p in output.iterdir() if p.is_file())
    order = "the original model's ids" if found else "translator's ids"
    # transformers' beam divides by length ** alpha alone (decode.len_norm power)
    differs = cfg.decode.beam > 1 and cfg.decode.len_norm != "power"
    return (
        f"{m.type} model exported to {output} (Hugging Face {cls}, float32, {order}, "
        f"{size / 1e6:.1f} MB)"
        + (
            f"; transformers' beam search normalises by length ** {cfg.decode.len_penalty}, "
            f"not decode.len_norm {cfg.decode.len_norm}, so its beam outputs may differ"
            if differs
            else ""
        )
    )


# config.json keys an imported model's export takes from its original: training settings
# translator does not hold (layer drop, activation dropout) and M2M100's <s>, which no
# search uses (translator's start is its </s>, the decoder's start)
ORIGINAL_ONLY = ("bos_token_id", "encoder_layerdrop", "decoder_layerdrop", "activation_dropout")


def model_config(cls: str, cfg, src_ids: list, tgt_ids: list, model, ids: dict) -> dict:
    """config.json of the class."""
    m = cfg.model
    shared = model.src_embed is model.tgt_embed
    out = {
        "architectures": [cls],
        "model_type": "marian" if cls == MARIAN else "m2m_100",
        "vocab_size": max(src_ids) + 1,
        "d_model": m.d_model,
        "encoder_layers": m.enc_layers,
        "decoder_layers": m.dec_layers,
        "encoder_attention_heads": m.heads,
        "decoder_attention_heads": m.heads,
        "encoder_ffn_dim": m.ff_dim,
        "decoder_ffn_dim": m.ff_dim,
        "activation_function": m.activation,
        "max_position_embeddings": m.max_positions,
        "scale_embedding": m.embed_scale,
        # an M2M100 that ties does so for the encoder's table too
        "tie_word_embeddings": model.generator.weight is model.tgt_embed.weight
        and (cls == MARIAN or shared),
        "dropout": m.dropout,
        "attention_dropout": m.attention_dropout,
        "activation_dropout": 0.0,
        "encoder_layerdrop": 0.0,
        "decoder_layerdrop": 0.0,
        "is_encoder_decoder": True,
        "dtype": "float32",
        **ids,
    }
    if cls == MARIAN:
        out["decoder_vocab_size"] = max(tgt_ids) + 1
        out["share_encoder_decoder_embeddings"] = shared
    else:
        out["bos_token_id"] = tgt_ids[BOS]
    return out


def generation(cfg, ids: dict, banned: set[int]) -> dict:
    """generation_config.json: translator's start, end and banned outputs (<pad>, <s>,
    <unk> unless decode.allow_unk, input-only tags), its beam size and length penalty.
    early_stopping: translator's beam search ends a sentence at `beam` finished hypotheses,
    where transformers' default searches on. `translator`: the length cap, which only
    translator's importer reads (transformers caps the output alone, not by the input)."""
    return {
        **ids,
        "bad_words_ids": [[i] for i in sorted(banned)],
        "max_length": cfg.model.max_positions,
        "num_beams": cfg.decode.beam,
        "length_penalty": cfg.decode.len_penalty,
        "early_stopping": True,
        "translator": {"max_len_a": cfg.decode.max_len_a, "max_len_b": cfg.decode.max_len_b},
    }
