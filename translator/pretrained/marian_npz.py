"""A native Marian model (marian-nmt: the .npz and the files decoder.yml names) as a
translator checkpoint, computing what CTranslate2's Marian converter computes:

    Marian (model.yml, array names)              translator
    transformer-postprocess dan                  pre_norm false
    transformer-preprocess n, postprocess da,    pre_norm true, final_norm (from
      postprocess-top n (or '')                    {encoder,decoder}_top_ln_*)
    embeddings x sqrt(dim-emb), sinusoids        embed_scale true, positions halves
      (sin in the first half, cos in the second)
    transformer-ffn-activation swish | relu      activation
    decoder_ff_logit_out_b                       logits_bias: generator.bias
    Wemb (tied-embeddings-src/-all) or           share_embeddings
      encoder_Wemb + decoder_Wemb
    no decoder_ff_logit_out_W (tied output)      tie_embeddings
    {p}_Wq, _Wk, _Wv: matrices [in, out]         qkv (transposed), rows [q; k; v]
    {p}_Wo_ln_* / {p}_ffn_ffn_ln_* (_pre)        the sublayers' norms

Layers are numbered from 1 (encoder_l1_self, decoder_l1_context, ...).

Ids are numbered anew (data/vocab.py): 0-3 are translator's <pad>, <unk>, <s>, </s>, then
every other entry of the vocabulary in Marian's order. Marian has no <pad> and starts
decoding from a zero embedding: translator's <pad> and <s> get zero rows (and a logit
bias no output takes), so starting from <s> is numerically Marian's start. The checkpoint's
`source` keeps each side's table of translator id -> Marian id (-1: a row Marian lacks)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import torch

from translator.config import config_from_dict
from translator.data.vocab import VocabTokenizer
from translator.errors import UserError
from translator.models.checkpoint import Checkpoint
from translator.models.family import build_model
from translator.pretrained.files import card, data_section, read_spm
from translator.specials import BOS, PAD, SPECIAL_PIECES

NAME = "Marian (native .npz)"
SUPPORTED = "native Marian transformer models (.npz with decoder.yml, or an OPUS-MT .zip)"
NEVER = -1e4  # (the logit bias of marian.py: exp is 0 in float32, float16 holds it)
NO_ROW = -1  # a translator id with no Marian row (<pad>, <s>)
# model.yml options that change what a model computes, with the only value translator
# computes; guided alignment (transformer-guided-alignment-layer) changes no output.
REQUIRED = {
    "type": "transformer",
    "transformer-decoder-autoreg": "self-attention",
    "transformer-ffn-depth": 2,
    "transformer-no-projection": False,
    "transformer-train-positions": False,
    "right-left": False,
    "lemma-dim-emb": 0,
    "transformer-tied-layers": [],
}
DEFAULTS = {"transformer-postprocess-emb": "d", "transformer-postprocess-top": ""}
ACTIVATIONS = ("relu", "swish")  # (Marian's gelu is x * sigmoid(1.702 x), not translator's)


def recognises(folder: Path) -> bool:
    return (folder / "decoder.yml").is_file() or any(folder.glob("*.npz"))


def _yaml(data: bytes | str, where: str):
    import yaml

    try:
        return yaml.safe_load(data)
    except yaml.YAMLError as err:
        reason = " ".join(str(err).split())[:120]
        raise UserError(f"{where}: not readable YAML ({reason})") from None


def _decoder_yml(folder: Path) -> dict:
    path = folder / "decoder.yml"
    if not path.is_file():
        raise UserError(
            f"{folder}: decoder.yml is missing (a Marian model folder holds it: it names the "
            "model's .npz and vocabularies)"
        )
    found = _yaml(path.read_text(encoding="utf-8", errors="replace"), str(path))
    if not isinstance(found, dict) or not found.get("models") or not found.get("vocabs"):
        raise UserError(f"{path}: 'models' and 'vocabs' lists expected")
    return found


def _member(folder: Path, name, what: str) -> Path:
    """A file decoder.yml names: looked for in the folder (the paths Marian wrote are often
    those of the machine that trained it)."""
    path = folder / Path(str(name)).name
    if not path.is_file():
        raise UserError(f"{folder}: {path.name} is missing ({what}, named by decoder.yml)")
    return path


def read_npz(path: Path) -> tuple[dict[str, np.ndarray], dict]:
    """(the arrays, model.yml's options) of a Marian .npz."""
    try:
        with np.load(path, allow_pickle=False) as npz:
            arrays = {name: npz[name] for name in npz.files}
    except Exception as err:  # truncated or foreign files fail in numpy's own ways
        raise UserError(f"{path}: not a readable .npz ({type(err).__name__})") from None
    raw = arrays.pop("special:model.yml", None)
    if raw is None:
        raise UserError(f"{path}: no special:model.yml entry (not a Marian model)")
    options = _yaml(raw.tobytes().rstrip(b"\0"), f"{path} special:model.yml")
    if not isinstance(options, dict):
        raise UserError(f"{path}: special:model.yml holds no options")
    return arrays, options


def check_options(where: str, options: dict) -> bool:
    """Every option the import cannot honour, in one error; whether the model is pre-norm."""
    problems = []
    for key, want in REQUIRED.items():
        got = options.get(key, want)
        if got != want and not (key == "transformer-tied-layers" and not got):
            problems.append(f"{key} {got!r} (translator computes {want!r})")
    pre, post = options.get("transformer-preprocess", ""), options.get("transformer-postprocess")
    top = options.get("transformer-postprocess-top", "")
    if (pre, post, top) not in (("", "dan", ""), ("n", "da", "n"), ("n", "da", "")):
        problems.append(
            f"transformer-preprocess {pre!r} with transformer-postprocess {post!r} and "
            f"transformer-postprocess-top {top!r} (translator computes '' dan '' or n da n)"
        )
    emb = options.get("transformer-postprocess-emb", "d")
    if emb not in ("", "d"):
        problems.append(f"transformer-postprocess-emb {emb!r} (translator computes 'd')")
    act = options.get("transformer-ffn-activation", "swish")
    if act not in ACTIVATIONS:
        problems.append(f"transformer-ffn-activation {act!r} (supported: relu, swish)")
    for key in ("dim-emb", "enc-depth", "dec-depth", "transformer-heads", "transformer-dim-ffn"):
        if not isinstance(options.get(key), int) or options[key] <= 0:
            problems.append(f"{key} {options.get(key)!r} (a positive integer expected)")
    if problems:
        raise UserError(
            f"{where}: model.yml asks for what translator lacks: " + "; ".join(problems)
        )
    return pre == "n"


# `piece: id` as Marian writes each line of a vocabulary (a key in quotes where YAML needs it)
VOCAB_LINE = re.compile(r"^(.*):\s*(-?\d+)\s*$")


def read_vocab(path: Path) -> dict[str, int]:
    """piece -> Marian id of a vocabulary .yml (or of a sentencepiece model used as one)."""
    if path.suffix in (".spm", ".model"):
        import sentencepiece as spm

        try:
            sp = spm.SentencePieceProcessor(model_proto=path.read_bytes())
        except Exception:  # sentencepiece raises its own errors for a foreign file
            raise UserError(f"{path}: not a sentencepiece model") from None
        return {sp.id_to_piece(i): i for i in range(sp.get_piece_size())}
    if path.suffix == ".fsv":
        raise UserError(f"{path}: a factored vocabulary (factors); translator has none")
    # Read a line at a time: YAML would read keys such as `true` or `1` as other types.
    # A long key is written as YAML's complex key: `? piece` then `: id` on the next line.
    vocab: dict[str, int] = {}
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except UnicodeDecodeError:
        raise UserError(f"{path}: not UTF-8 text (a Marian vocabulary is)") from None
    held = None
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        if line.startswith("? "):
            held = line[2:]
            continue
        match = VOCAB_LINE.match(f"{held}{line}" if held is not None else line)
        held = None
        if match is None:
            raise UserError(f"{path}:{number}: not a `piece: id` line of a Marian vocabulary")
        key = match.group(1).strip()
        if key[:1] in "\"'" and len(key) > 1 and key[-1] == key[0]:
            key = _yaml(f"k: {key}", f"{path}:{number}")["k"]
        vocab[str(key)] = int(match.group(2))
    if sorted(vocab.values()) != list(range(len(vocab))):
        raise UserError(f"{path}: ids must be the numbers 0 .. {len(vocab) - 1}, each once")
    return vocab


def id_table(vocab: dict[str, int], where: str) -> tuple[list[int], list[str]]:
    """(translator id -> Marian id, translator id -> piece) of one side."""
    for special in ("</s>", "<unk>"):
        if special not in vocab:
            raise UserError(f"{where}: the vocabulary has no {special}")
    specials = [NO_ROW, vocab["<unk>"], NO_ROW, vocab["</s>"]]
    rest = sorted(set(vocab.values()) - set(specials))
    pieces = {i: p for p, i in vocab.items()}
    return specials + rest, list(SPECIAL_PIECES) + [pieces[i] for i in rest]


class Arrays:
    """The .npz's arrays by name, as float32 tensors; a missing one is a one-line error."""

    def __init__(self, arrays: dict[str, np.ndarray], where: str):
        self.arrays, self.where = arrays, where

    def get(self, name: str) -> torch.Tensor:
        if name not in self.arrays:
            raise UserError(f"{self.where}: the .npz lacks {name}")
        return torch.from_numpy(np.asarray(self.arrays[name], dtype=np.float32)).clone()

    def vector(self, name: str) -> torch.Tensor:
        return self.get(name).reshape(-1)

    def linear(self, scope: str, part: str) -> tuple[torch.Tensor, torch.Tensor]:
        """Marian's x @ W + b as a Linear's (weight [out, in], bias)."""
        return self.get(f"{scope}_W{part}").t().contiguous(), self.vector(f"{scope}_b{part}")

    def fused(self, scope: str, parts: str) -> tuple[torch.Tensor, torch.Tensor]:
        pairs = [self.linear(scope, p) for p in parts]
        return torch.cat([w for w, _ in pairs]), torch.cat([b for _, b in pairs])

    def norm(self, scope: str, pre: bool) -> tuple[torch.Tensor, torch.Tensor]:
        suffix = "_pre" if pre else ""
        return self.vector(f"{scope}_ln_scale{suffix}"), self.vector(f"{scope}_ln_bias{suffix}")


def _put(out: dict, name: str, weight_bias) -> None:
    out[f"{name}.weight"], out[f"{name}.bias"] = weight_bias


def layer_weights(a: Arrays, options: dict, pre: bool) -> dict[str, torch.Tensor]:
    """The encoder and decoder layers (and the final norms) under translator's names."""
    out: dict[str, torch.Tensor] = {}
    for i in range(options["enc-depth"]):
        m, ours = f"encoder_l{i + 1}", f"encoder.{i}"
        _put(out, f"{ours}.attn.qkv", a.fused(f"{m}_self", "qkv"))
        _put(out, f"{ours}.attn.out", a.linear(f"{m}_self", "o"))
        _put(out, f"{ours}.sub1.norm", a.norm(f"{m}_self_Wo", pre))
        _put(out, f"{ours}.ff.0", a.linear(f"{m}_ffn", "1"))
        _put(out, f"{ours}.ff.3", a.linear(f"{m}_ffn", "2"))
        _put(out, f"{ours}.sub2.norm", a.norm(f"{m}_ffn_ffn", pre))
    for i in range(options["dec-depth"]):
        m, ours = f"decoder_l{i + 1}", f"decoder.{i}"
        _put(out, f"{ours}.self_attn.qkv", a.fused(f"{m}_self", "qkv"))
        _put(out, f"{ours}.self_attn.out", a.linear(f"{m}_self", "o"))
        _put(out, f"{ours}.subs.0.norm", a.norm(f"{m}_self_Wo", pre))
        _put(out, f"{ours}.cross_attn.q", a.linear(f"{m}_context", "q"))
        _put(out, f"{ours}.cross_attn.kv", a.fused(f"{m}_context", "kv"))
        _put(out, f"{ours}.cross_attn.out", a.linear(f"{m}_context", "o"))
        _put(out, f"{ours}.subs.1.norm", a.norm(f"{m}_context_Wo", pre))
        _put(out, f"{ours}.ff.0", a.linear(f"{m}_ffn", "1"))
        _put(out, f"{ours}.ff.3", a.linear(f"{m}_ffn", "2"))
        _put(out, f"{ours}.subs.2.norm", a.norm(f"{m}_ffn_ffn", pre))
    if pre and options.get("transformer-postprocess-top") == "n":
        _put(out, "enc_norm", a.norm("encoder_top", False))
        _put(out, "dec_norm", a.norm("decoder_top", False))
    return out


def _rows(table: torch.Tensor, ids: list[int]) -> torch.Tensor:
    """The table's rows in translator's id order, zero where Marian has no row."""
    out = table[torch.tensor(ids).clamp(min=0)]
    out[torch.tensor(ids) == NO_ROW] = 0.0
    return out


def table_weights(a: Arrays, src_ids: list, tgt_ids: list) -> tuple[dict, bool, bool]:
    """(embeddings, output projection and logits bias in translator's id order, whether
    source and target share one table, whether the output is tied to it)."""
    shared = "Wemb" in a.arrays
    src = a.get("Wemb" if shared else "encoder_Wemb")
    tgt = src if shared else a.get("decoder_Wemb")
    tied = "decoder_ff_logit_out_W" not in a.arrays
    head = tgt if tied else a.get("decoder_ff_logit_out_W").t()
    bias = a.vector("decoder_ff_logit_out_b")
    for name, rows, ids in (
        ("the source embeddings", src.size(0), src_ids),
        ("the target embeddings", tgt.size(0), tgt_ids),
        ("decoder_ff_logit_out_W", head.size(0), tgt_ids),
        ("decoder_ff_logit_out_b", bias.size(0), tgt_ids),
    ):
        entries = len(ids) - ids.count(NO_ROW)
        if rows != entries:
            raise UserError(
                f"{a.where}: {name} have {rows} rows but the vocabulary {entries} entries"
            )
    bias = _rows(bias[:, None], tgt_ids).reshape(-1)
    bias[PAD] = bias[BOS] = NEVER  # rows Marian lacks take no share of the softmax
    weights = {
        "src_embed.weight": _rows(src, src_ids),
        "tgt_embed.weight": _rows(tgt, tgt_ids),
        "generator.weight": _rows(head, tgt_ids),
        "generator.bias": bias,
    }
    return weights, shared and src_ids == tgt_ids, tied


# OPUS-MT's README.md: "* source language(s): de" (several, space-separated, for some models)
README_LANGS = re.compile(r"^\W*(source|target) language\(s\):\s*(\S+)\s*$", re.M | re.I)


def languages(files: dict[str, str]) -> dict[str, str]:
    """The data section: data.src_lang and data.tgt_lang from an OPUS-MT card where it names
    one language a side, else "src" and "tgt"."""
    found = {"source": "src", "target": "tgt"}
    for side, lang in README_LANGS.findall(files.get("README.md", "")):
        found[side.lower()] = lang
    return data_section(found["source"], found["target"])


def translator_config(
    options: dict, pre: bool, vocab_size: int, share: bool, tie: bool, data: dict
) -> dict:
    """The resolved translator config of the Marian model; `data`: its languages."""
    model = {
        "type": "transformer",
        "d_model": options["dim-emb"],
        "heads": options["transformer-heads"],
        "ff_dim": options["transformer-dim-ffn"],
        "enc_layers": options["enc-depth"],
        "dec_layers": options["dec-depth"],
        "dropout": float(options.get("transformer-dropout", 0.1)),
        "attention_dropout": float(options.get("transformer-dropout-attention", 0.0)),
        "pre_norm": pre,
        "final_norm": pre and options.get("transformer-postprocess-top") == "n",
        "activation": options.get("transformer-ffn-activation", "swish"),
        "embed_scale": True,
        "positions": "halves",
        "logits_bias": True,
        "share_embeddings": share,
        "tie_embeddings": tie,
        "max_positions": 512,
    }
    raw = {
        "model": model,
        "data": data,
        "tokenizer": {"joint": False, "vocab_size": vocab_size},
    }
    return config_from_dict(raw, "the imported model's config").to_dict()


def import_folder(folder: Path, origin: dict) -> Checkpoint:
    """The checkpoint of the Marian model in `folder`; `origin`: where it came from (its
    "model": the .npz to read, where decoder.yml names another or several)."""
    decoder = _decoder_yml(folder)
    npz = _member(folder, origin.get("model") or decoder["models"][0], "the model")
    vocab_files = [_member(folder, v, "a vocabulary") for v in decoder["vocabs"]]
    if len(vocab_files) != 2:
        raise UserError(
            f"{folder / 'decoder.yml'}: {len(vocab_files)} vocabularies (translator imports "
            "models of one source and one target)"
        )
    spm = (read_spm(folder, "source.spm"), read_spm(folder, "target.spm"))
    where = str(npz)
    arrays, options = read_npz(npz)
    pre = check_options(where, options)
    joint = vocab_files[0].resolve() == vocab_files[1].resolve()
    src_ids, src_pieces = id_table(read_vocab(vocab_files[0]), str(vocab_files[0]))
    tgt_ids, tgt_pieces = id_table(read_vocab(vocab_files[1]), str(vocab_files[1]))
    a = Arrays(arrays, where)
    tables, share, tie = table_weights(a, src_ids, tgt_ids)
    weights = {**tables, **layer_weights(a, options, pre)}
    tokenizer = VocabTokenizer(*spm, src_pieces, None if joint else tgt_pieces)
    files = card(folder)
    cfg = translator_config(options, pre, len(src_ids), share, tie, languages(files))
    ckpt = Checkpoint(config=cfg, tokenizer=tokenizer.state(), model=weights)
    model = build_model(config_from_dict(cfg).model, len(src_ids), len(tgt_ids), tokenizer.joint)
    ckpt.load_weights(model, where)  # the names and shapes are ours: a mismatch is a bug here
    ckpt.model = model.state_dict()
    ckpt.source = {
        "format": "marian-npz",
        **origin,
        "model": npz.name,
        "config": json.loads(json.dumps(options, default=str)),  # (YAML may give dates)
        "ids": {"src": src_ids, "tgt": None if joint else tgt_ids},
        "files": files,
    }
    return ckpt
