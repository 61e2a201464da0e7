"""A Hugging Face MarianMT folder as a translator checkpoint, computing what transformers'
MarianMTModel computes (modeling_marian.py):

    Marian (transformers)                      translator
    post-norm layers, no final LayerNorm       pre_norm false (final_norm false)
    embed_scale sqrt(d_model) or 1             embed_scale
    sin in the first half, cos in the second   positions: halves
    activation_function relu | gelu | swish    activation
    final_logits_bias                          logits_bias: generator.bias
    share_encoder_decoder_embeddings           share_embeddings (where the tables agree)
    tie_word_embeddings                        tie_embeddings
    q_proj, k_proj, v_proj (self-attention)    qkv, rows [q; k; v]
    k_proj, v_proj (encoder attention)         kv, rows [k; v]

Ids are numbered anew (data/vocab.py): 0-3 are translator's <pad>, <unk>, <s>, </s>, then
every other entry of vocab.json in its order. Marian's decoder starts from its
decoder_start_token_id (the pad id, a zero row): that row becomes translator's <s> as
well as <pad>, so starting from <s> is numerically Marian's start. The checkpoint's
`source` keeps each side's table of translator id -> Marian id."""

from __future__ import annotations

import re
from pathlib import Path

import torch

from translator.config import config_from_dict
from translator.data.vocab import VocabTokenizer
from translator.errors import UserError
from translator.models.checkpoint import Checkpoint
from translator.models.family import build_model
from translator.pretrained.files import card, data_section, read_json, read_spm, read_weights
from translator.specials import BOS, SPECIAL_PIECES

ACTIVATIONS = {"relu": "relu", "gelu": "gelu", "swish": "swish", "silu": "swish"}
NAME = "MarianMT"
SUPPORTED = "Hugging Face MarianMTModel folders (model_type marian)"
# A logit bias whose exp is 0 in float32 and that float16 still holds (|x| < 65504).
NEVER = -1e4
# OPUS-MT's multilingual models name the target language with a token before the source
TARGET_TOKEN = re.compile(r"^>>([A-Za-z_]{2,})<<$")


def recognises(folder: Path) -> bool:
    config = read_json(folder, "config.json", required=False)
    return config is not None and (
        config.get("model_type") == "marian"
        or "MarianMTModel" in (config.get("architectures") or [])
    )


def bart_problems(config: dict, activation: str, sizes: tuple[str, ...] = ()) -> list[str]:
    """What a transformers config of the BART kind (MarianMT, M2M100) asks that translator's
    Transformer lacks; `activation`: the config's default, `sizes`: more keys that must be
    positive integers."""
    problems = []
    for key in ("d_model", "encoder_layers", "decoder_layers", "encoder_attention_heads", *sizes):
        if not isinstance(config.get(key), int) or config[key] <= 0:
            problems.append(f"{key} {config.get(key)!r} (a positive integer expected)")
    d_model, heads = config.get("d_model"), config.get("encoder_attention_heads")
    if not problems and d_model % heads:
        problems.append(f"d_model {d_model} not divisible by encoder_attention_heads {heads}")
    for enc, dec in (
        ("encoder_attention_heads", "decoder_attention_heads"),
        ("encoder_ffn_dim", "decoder_ffn_dim"),
    ):
        if config.get(enc) != config.get(dec, config.get(enc)):
            problems.append(f"{enc} {config.get(enc)} != {dec} {config.get(dec)}")
    for key in ("encoder_ffn_dim", "decoder_ffn_dim", "max_position_embeddings"):
        value = config.get(key, 1)
        if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
            problems.append(f"{key} {value!r} (a positive integer expected)")
    for key in ("dropout", "attention_dropout"):
        value = config.get(key, 0.0)
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value < 1:
            problems.append(f"{key} {value!r} (a number from 0 to below 1 expected)")
    act = config.get("activation_function", activation)
    if act not in ACTIVATIONS:
        problems.append(f"activation_function {act!r} (supported: {', '.join(ACTIVATIONS)})")
    return problems


def refuse(folder: Path, problems: list[str]) -> None:
    if problems:
        raise UserError(
            f"{folder}: config.json asks for what translator lacks: " + "; ".join(problems)
        )


def vocabularies(folder: Path, tok: dict) -> tuple[dict, dict | None]:
    """(source vocabulary, target vocabulary or None where one serves both): piece -> id;
    `tok`: the folder's tokenizer_config.json."""
    src = _vocab(folder, "vocab.json")
    if not tok.get("separate_vocabs"):
        return src, None
    return src, _vocab(folder, tok.get("target_vocab_file") or "target_vocab.json")


def _vocab(folder: Path, name: str) -> dict:
    vocab = read_json(folder, Path(name).name)
    ids = sorted(vocab.values()) if all(isinstance(i, int) for i in vocab.values()) else None
    if ids != list(range(len(vocab))):
        raise UserError(
            f"{folder / name}: ids must be the numbers 0 .. {len(vocab) - 1}, each once"
        )
    return vocab


def id_table(
    vocab: dict, config: dict, where: str, source_only: bool = False
) -> tuple[list[int], list[str]]:
    """(translator id -> Marian id, translator id -> piece) of one side. config.json's ids
    are the target's; a source vocabulary of its own (`source_only`) names its <pad> and
    </s>, and its <s> (never used: sources do not start with one) is its <pad>."""
    pad, eos = config.get("pad_token_id"), config.get("eos_token_id")
    if source_only:
        pad, eos = vocab.get("<pad>", pad), vocab.get("</s>", eos)
    start = pad if source_only else config.get("decoder_start_token_id", pad)
    if "<unk>" not in vocab:
        raise UserError(f"{where}: a vocabulary has no <unk>")
    specials = [pad, vocab["<unk>"], start, eos]
    names = ("pad_token_id", "<unk>", "decoder_start_token_id", "eos_token_id")
    for name, i in zip(names, specials):
        if not isinstance(i, int) or not 0 <= i < len(vocab):
            raise UserError(f"{where}: {name} {i!r} is not an id of the vocabulary")
    taken = set(specials)
    rest = [i for i in vocab.values() if i not in taken]
    pieces = {i: p for p, i in vocab.items()}
    return specials + rest, list(SPECIAL_PIECES) + [pieces[i] for i in rest]


def check_shapes(model, weights: dict[str, torch.Tensor], folder: Path) -> None:
    """Each tensor against the shape config.json's sizes give it in `model`: a folder whose
    config and weights disagree is the folder's mistake, named in one line."""
    want = model.state_dict()
    for name, tensor in weights.items():
        if name in want and want[name].shape != tensor.shape:
            raise UserError(
                f"{folder}: config.json's sizes (d_model, encoder_ffn_dim, decoder_ffn_dim) do "
                f"not fit the weights: translator's {name} is {list(tensor.shape)} in the "
                f"weights but {list(want[name].shape)} by config.json"
            )


class Weights:
    """The state dict of transformers' MarianMTModel, read by name (with or without the
    `model.` prefix MarianModel lacks); a missing tensor is a one-line error."""

    def __init__(self, tensors: dict[str, torch.Tensor], where: str):
        self.tensors = {k.removeprefix("model."): v for k, v in tensors.items()}
        self.where = where

    def get(self, *names: str) -> torch.Tensor:
        for name in names:
            if name in self.tensors:
                return self.tensors[name].float()
        raise UserError(f"{self.where}: the weights lack {names[0]}")

    def linear(self, name: str) -> tuple[torch.Tensor, torch.Tensor]:
        return self.get(f"{name}.weight"), self.get(f"{name}.bias")

    def fused(self, *names: str) -> tuple[torch.Tensor, torch.Tensor]:
        parts = [self.linear(n) for n in names]
        return torch.cat([w for w, _ in parts]), torch.cat([b for _, b in parts])


def _put(out: dict, name: str, weight_bias) -> None:
    out[f"{name}.weight"], out[f"{name}.bias"] = weight_bias


LAYER = re.compile(r"(encoder|decoder)\.layers\.(\d+)\.")


def layer_weights(w: Weights, config: dict) -> dict[str, torch.Tensor]:
    """The encoder and decoder layers under translator's names; weights of a layer beyond
    config.json's count are a one-line error (dropping them would make another model)."""
    for name in w.tensors:
        found = LAYER.match(name)
        key = found and f"{found.group(1)}_layers"
        if found and int(found.group(2)) >= config[key]:
            raise UserError(
                f"{w.where}: the weights hold {name}, a layer beyond config.json's {key} "
                f"{config[key]}"
            )
    out: dict[str, torch.Tensor] = {}
    for i in range(config["encoder_layers"]):
        hf, ours = f"encoder.layers.{i}", f"encoder.{i}"
        attn = f"{hf}.self_attn"
        _put(out, f"{ours}.attn.qkv", w.fused(f"{attn}.q_proj", f"{attn}.k_proj", f"{attn}.v_proj"))
        _put(out, f"{ours}.attn.out", w.linear(f"{attn}.out_proj"))
        _put(out, f"{ours}.sub1.norm", w.linear(f"{hf}.self_attn_layer_norm"))
        _put(out, f"{ours}.ff.0", w.linear(f"{hf}.fc1"))
        _put(out, f"{ours}.ff.3", w.linear(f"{hf}.fc2"))
        _put(out, f"{ours}.sub2.norm", w.linear(f"{hf}.final_layer_norm"))
    for i in range(config["decoder_layers"]):
        hf, ours = f"decoder.layers.{i}", f"decoder.{i}"
        attn, cross = f"{hf}.self_attn", f"{hf}.encoder_attn"
        qkv = w.fused(f"{attn}.q_proj", f"{attn}.k_proj", f"{attn}.v_proj")
        _put(out, f"{ours}.self_attn.qkv", qkv)
        _put(out, f"{ours}.self_attn.out", w.linear(f"{attn}.out_proj"))
        _put(out, f"{ours}.subs.0.norm", w.linear(f"{hf}.self_attn_layer_norm"))
        _put(out, f"{ours}.cross_attn.q", w.linear(f"{cross}.q_proj"))
        _put(out, f"{ours}.cross_attn.kv", w.fused(f"{cross}.k_proj", f"{cross}.v_proj"))
        _put(out, f"{ours}.cross_attn.out", w.linear(f"{cross}.out_proj"))
        _put(out, f"{ours}.subs.1.norm", w.linear(f"{hf}.encoder_attn_layer_norm"))
        _put(out, f"{ours}.ff.0", w.linear(f"{hf}.fc1"))
        _put(out, f"{ours}.ff.3", w.linear(f"{hf}.fc2"))
        _put(out, f"{ours}.subs.2.norm", w.linear(f"{hf}.final_layer_norm"))
    return out


def embedding_tables(w: Weights, config: dict) -> tuple[torch.Tensor, ...]:
    """(source, target, output) tables as transformers reads them: each side's own table,
    shared.weight where the file holds only that (tied tables are saved once). transformers
    5 ties nothing where tie_word_embeddings is false, so a file saved then may hold three
    different tables even with share_encoder_decoder_embeddings."""
    src = w.get("encoder.embed_tokens.weight", "shared.weight")
    tgt = w.get("decoder.embed_tokens.weight", "shared.weight")
    head = tgt if config.get("tie_word_embeddings", True) else w.get("lm_head.weight")
    return src, tgt, head


def shares_tables(w: Weights, config: dict) -> bool:
    """Whether one table serves both sides (the config says so and the tables agree)."""
    src, tgt, _ = embedding_tables(w, config)
    share = config.get("share_encoder_decoder_embeddings", True)
    return bool(share) and src.shape == tgt.shape and torch.equal(src, tgt)


def table_weights(w: Weights, config: dict, src_ids: list, tgt_ids: list) -> dict:
    """Embeddings, output projection and logits bias, rows in translator's id order."""
    src, tgt, head = embedding_tables(w, config)
    bias = w.tensors.get("final_logits_bias", torch.zeros(1, head.size(0))).float().reshape(-1)
    for name, table, ids in (
        ("the source embeddings", src, src_ids),
        ("the target embeddings", tgt, tgt_ids),
        ("lm_head", head, tgt_ids),
        ("final_logits_bias", bias, tgt_ids),
    ):
        entries = len(set(ids))  # (<s> and <pad> may share Marian's row)
        if table.size(0) != entries:
            raise UserError(
                f"{w.where}: {name} have {table.size(0)} rows but the vocabulary {entries} entries"
            )
    target_key = "decoder_vocab_size" if "decoder_vocab_size" in config else "vocab_size"
    for name, table, key in (("the source embeddings", src, "vocab_size"),
                             ("the target embeddings", tgt, target_key)):  # fmt: skip
        size = config.get(key)
        if isinstance(size, int) and table.size(0) != size:  # (transformers refuses it too)
            raise UserError(f"{w.where}: {name} have {table.size(0)} rows but config.json's "
                            f"{key} is {size}")  # fmt: skip
    index = torch.tensor(tgt_ids)
    bias = bias[index]
    # Where <s> repeats Marian's start row (its pad row, also ours at <pad>), that entry must
    # not take a second share of the softmax, or every probability would differ from Marian's
    if tgt_ids.count(tgt_ids[BOS]) > 1:
        bias[BOS] = NEVER
    return {
        "src_embed.weight": src[torch.tensor(src_ids)],
        "tgt_embed.weight": tgt[index],
        "generator.weight": head[index],
        "generator.bias": bias,
    }


def bart_model(config: dict, layout: dict, **keys) -> dict:
    """translator's model section of a transformers config of the BART kind (MarianMT,
    M2M100): the sizes they share; from `layout` (as MARIAN_LAYOUT) the activation and
    length where the config names none, and the keys where the classes differ; `keys`."""
    fixed = {k: v for k, v in layout.items() if k not in ("activation", "max_positions")}
    return {
        "type": "transformer",
        "d_model": config["d_model"],
        "heads": config["encoder_attention_heads"],
        "ff_dim": config.get("encoder_ffn_dim", 4 * config["d_model"]),
        "enc_layers": config["encoder_layers"],
        "dec_layers": config["decoder_layers"],
        "dropout": float(config.get("dropout", 0.1)),
        "attention_dropout": float(config.get("attention_dropout", 0.0)),
        "activation": ACTIVATIONS[config.get("activation_function", layout["activation"])],
        "embed_scale": bool(config.get("scale_embedding", False)),
        "tie_embeddings": bool(config.get("tie_word_embeddings", True)),
        "max_positions": int(config.get("max_position_embeddings", layout["max_positions"])),
        **fixed,
        **keys,
    }


# translator's model keys for MarianMTModel, and the activation and length it defaults to.
# MarianMTModel is post-norm whatever `normalize_before` says (it reads no such key).
MARIAN_LAYOUT = {
    "activation": "gelu",
    "max_positions": 512,
    "pre_norm": False,
    "final_norm": False,
    "positions": "halves",
}


def translator_config(
    config: dict, tok: dict, vocab_size: int, share: bool, layout: dict = MARIAN_LAYOUT
) -> dict:
    """The resolved translator config of the model (`layout`: its class's keys, as
    MARIAN_LAYOUT) read through MarianTokenizer's files; `share`: one embedding table."""
    model = bart_model(config, layout, logits_bias=True, share_embeddings=share)
    data = data_section(str(tok.get("source_lang") or "src"), str(tok.get("target_lang") or "tgt"))
    raw = {"model": model, "data": data, "tokenizer": {"joint": False, "vocab_size": vocab_size}}
    return config_from_dict(raw, "the imported model's config").to_dict()


def stack_norms(w: Weights) -> dict[str, torch.Tensor]:
    """The LayerNorm after each stack of a pre-norm model (M2M100's)."""
    out = {}
    for hf, ours in (("encoder.layer_norm", "enc_norm"), ("decoder.layer_norm", "dec_norm")):
        out[f"{ours}.weight"], out[f"{ours}.bias"] = w.linear(hf)
    return out


def import_folder(
    folder: Path, origin: dict, layout: dict = MARIAN_LAYOUT, kind: str = "huggingface-marian"
) -> Checkpoint:
    """The checkpoint of the MarianMT model in `folder`, or of another class read through
    MarianTokenizer's files (`layout`, `kind`: pretrained/m2m100.py's M2M100 exported by
    translator); `origin`: where it came from."""
    where = str(folder)
    config = read_json(folder, "config.json")
    refuse(folder, bart_problems(config, layout["activation"]))
    tok = read_json(folder, "tokenizer_config.json", required=False) or {}
    src_vocab, tgt_vocab = vocabularies(folder, tok)
    if tgt_vocab is not None and config.get("share_encoder_decoder_embeddings", True):
        raise UserError(
            f"{folder}: separate vocabularies (tokenizer_config.json) but one embedding table "
            "(config.json share_encoder_decoder_embeddings)"
        )
    src_ids, src_pieces = id_table(src_vocab, config, where, source_only=tgt_vocab is not None)
    tgt_ids, tgt_pieces = (
        (src_ids, None) if tgt_vocab is None else id_table(tgt_vocab, config, where)
    )
    tokenizer = VocabTokenizer(
        read_spm(folder, "source.spm"), read_spm(folder, "target.spm"), src_pieces, tgt_pieces
    )
    w = Weights(read_weights(folder), where)
    weights = {**table_weights(w, config, src_ids, tgt_ids), **layer_weights(w, config)}
    if layout["final_norm"]:
        weights.update(stack_norms(w))
    cfg = translator_config(config, tok, len(src_ids), shares_tables(w, config), layout)
    ckpt = Checkpoint(config=cfg, tokenizer=tokenizer.state(), model=weights)
    model = build_model(config_from_dict(cfg).model, len(src_ids), len(tgt_ids), tokenizer.joint)
    check_shapes(model, weights, folder)
    ckpt.load_weights(model, where)  # the names and shapes are ours: a mismatch is a bug here
    ckpt.model = model.state_dict()
    ckpt.source = {
        "format": kind,
        **origin,
        "config": config,
        "ids": {"src": src_ids, "tgt": None if tgt_vocab is None else tgt_ids},
        "files": card(folder),
    }
    tokens = {m.group(1): i for i, p in enumerate(src_pieces) if (m := TARGET_TOKEN.match(p))}
    if tokens:  # engines/lang_codes.py: --tgt-lang puts its token before the source
        ckpt.source.update(languages=tokens, languages_at="source")
    return ckpt
