"""A Hugging Face M2M100 or NLLB-200 folder as a translator checkpoint, computing what
transformers' M2M100ForConditionalGeneration computes (modeling_m2m_100.py):

    M2M100 (transformers)                        translator
    pre-norm layers, a LayerNorm after each      pre_norm true, final_norm true
      stack (encoder.layer_norm, decoder...)
    embed_scale sqrt(d_model) or 1               embed_scale
    M2M100SinusoidalPositionalEmbedding          positions: m2m100 (models/positions.py)
    activation_function                          activation
    shared (encoder, decoder, lm_head tied)      share_embeddings, tie_embeddings
      (each table its own where they differ)
    no logits bias                               logits_bias: zeros, but <s> (below)
    layer weights named as Marian's              pretrained/marian.py's layer_weights

Ids come from the folder's tokenizer.json (NllbTokenizer: fairseq's <s> 0, <pad> 1, </s> 2,
<unk> 3, the sentencepiece pieces at their id + 1, the language codes such as deu_Latn,
<mask>) or, for M2M100Tokenizer, its vocab.json followed by the codes (__de__, chosen as
de: m2m100_codes.py). They are numbered anew as in marian.py: 0-3 are translator's <pad>,
<unk>, <s>, </s>, then every other id in its order; embedding rows past the tokenizer's
ids keep pieces of their own (<extra:ID>), so the softmax runs over the same entries.

The decoder starts from decoder_start_token_id (</s>), which becomes translator's <s>;
the first token it outputs is the target language's code (forced_bos_token_id). A source
is [source language code] + pieces + </s> (NllbTokenizer without legacy_behaviour,
M2M100Tokenizer). The checkpoint's `source` record holds the id table and the language
codes; engines/lang_codes.py turns --src-lang / --tgt-lang into the source's first id
and the target's forced first id of each request.

translator's own export of a pre-norm model is an M2M100 folder with MarianTokenizer's
files (source.spm, vocab.json) and translator's ids; marian.py reads it, in this layout."""

from __future__ import annotations

import json
from pathlib import Path

import torch

from translator.config import config_from_dict
from translator.data.vocab import VocabTokenizer
from translator.errors import UserError
from translator.models.checkpoint import Checkpoint
from translator.models.family import build_model
from translator.pretrained import marian
from translator.pretrained.files import card, data_section, read_json, read_spm, read_weights
from translator.pretrained.marian import (
    NEVER,
    Weights,
    bart_model,
    bart_problems,
    check_shapes,
    embedding_tables,
    layer_weights,
    refuse,
    stack_norms,
)
from translator.specials import BOS, SPECIAL_PIECES

NAME = "M2M100/NLLB"
SUPPORTED = (
    "Hugging Face M2M100ForConditionalGeneration folders (model_type m2m_100: NLLB-200 with "
    "tokenizer.json, or M2M100 with vocab.json; and sentencepiece.bpe.model; or translator's "
    "export with MarianTokenizer's files)"
)
SPM_FILE = "sentencepiece.bpe.model"
TOKENIZER_FILES = ("tokenizer.json", "vocab.json")  # NllbTokenizer's, M2M100Tokenizer's ids
# Named specials of the tokenizer: every other special added token is a language code
NAMED = ("<s>", "<pad>", "</s>", "<unk>", "<mask>")
NO_TARGET = "mul"
ENGLISH = ("eng_Latn", "en")  # NllbTokenizer's and M2M100Tokenizer's default src_lang
# translator's model keys for M2M100, and the activation and length it defaults to
LAYOUT = {
    "activation": "relu",
    "max_positions": 1024,
    "pre_norm": True,
    "final_norm": True,
    "positions": "m2m100",
}


def recognises(folder: Path) -> bool:
    config = read_json(folder, "config.json", required=False)
    return config is not None and (
        config.get("model_type") == "m2m_100"
        or "M2M100ForConditionalGeneration" in (config.get("architectures") or [])
    )


def check_config(folder: Path, config: dict) -> None:
    """Every setting the import cannot honour, in one error."""
    problems = bart_problems(config, "relu", ("vocab_size",))
    # positions: m2m100 starts at fairseq's padding_idx + 1 = 2, which needs <pad> at 1
    if config.get("pad_token_id", 1) != 1:
        problems.append(f"pad_token_id {config.get('pad_token_id')!r} (positions need 1)")
    refuse(folder, problems)


def hf_vocabulary(folder: Path, tok: dict) -> tuple[dict[str, int], dict[str, int]]:
    """(piece -> id of every entry of the tokenizer, language code -> its id): an
    NllbTokenizer's tokenizer.json, else an M2M100Tokenizer's vocab.json (`tok`: its
    tokenizer_config.json, which names its list of codes)."""
    if not (folder / "tokenizer.json").is_file():
        if (folder / "vocab.json").is_file():
            return m2m100_vocabulary(folder, tok)
        raise UserError(
            f"{folder}: neither tokenizer.json (NLLB's ids) nor vocab.json (M2M100's) is here; "
            "a model folder holds one of them"
        )
    path = folder / "tokenizer.json"
    data = read_json(folder, "tokenizer.json")
    model = data.get("model") if isinstance(data.get("model"), dict) else {}
    vocab = model.get("vocab")
    if isinstance(vocab, list):  # a Unigram model lists [piece, score] pairs
        vocab = {entry[0]: i for i, entry in enumerate(vocab) if isinstance(entry, list)}
    if not isinstance(vocab, dict) or not all(isinstance(i, int) for i in vocab.values()):
        raise UserError(f"{path}: no model.vocab of pieces to ids")
    vocab = dict(vocab)
    codes = []
    for token in data.get("added_tokens") or []:
        if not isinstance(token, dict) or not isinstance(token.get("id"), int):
            raise UserError(f"{path}: an entry of added_tokens has no id")
        vocab[str(token["content"])] = token["id"]
        if token.get("special") and token["content"] not in NAMED:
            codes.append((token["id"], str(token["content"])))
    if len(set(vocab.values())) != len(vocab):
        raise UserError(f"{path}: two pieces share an id")
    return vocab, {code: i for i, code in sorted(codes)}


def m2m100_vocabulary(folder: Path, tok: dict) -> tuple[dict[str, int], dict[str, int]]:
    """M2M100Tokenizer's ids: vocab.json (fairseq's dictionary), then __xx__ of each code of
    the named list."""
    from translator.pretrained.m2m100_codes import LANGUAGE_CODES, lang_piece

    vocab = read_json(folder, "vocab.json")
    ids = sorted(vocab.values()) if all(isinstance(i, int) for i in vocab.values()) else None
    if ids != list(range(len(vocab))):
        raise UserError(
            f"{folder / 'vocab.json'}: ids must be the numbers 0 .. {len(vocab) - 1}, each once"
        )
    name = tok.get("language_codes", "m2m100")
    if name not in LANGUAGE_CODES:
        raise UserError(
            f"{folder / 'tokenizer_config.json'}: language_codes {name!r} (known: "
            f"{', '.join(LANGUAGE_CODES)})"
        )
    codes = {code: len(vocab) + i for i, code in enumerate(LANGUAGE_CODES[name])}
    return {**vocab, **{lang_piece(c): i for c, i in codes.items()}}, codes


def id_table(vocab: dict[str, int], config: dict, where: str) -> tuple[list[int], list[str]]:
    """(translator id -> HF id, translator id -> piece); HF ids from 0 to vocab_size - 1,
    those tokenizer.json lacks named <extra:ID>."""
    size = config["vocab_size"]
    pieces = {i: p for p, i in vocab.items()}
    if max(pieces) >= size:
        raise UserError(
            f"{where}: tokenizer.json has id {max(pieces)} but config.json vocab_size {size}"
        )
    pad, eos = config.get("pad_token_id", 1), config.get("eos_token_id", 2)
    start = config.get("decoder_start_token_id", eos)
    if "<unk>" not in vocab:
        raise UserError(f"{where}: tokenizer.json has no <unk>")
    specials = [pad, vocab["<unk>"], start, eos]
    names = ("pad_token_id", "<unk>", "decoder_start_token_id", "eos_token_id")
    for name, i in zip(names, specials):
        if not isinstance(i, int) or not 0 <= i < size:
            raise UserError(f"{where}: {name} {i!r} is not an id of the vocabulary")
    taken = set(specials)
    rest = [i for i in range(size) if i not in taken]
    return specials + rest, list(SPECIAL_PIECES) + [pieces.get(i, f"<extra:{i}>") for i in rest]


def hidden_ids(vocab: dict[str, int], codes: dict[str, int], ids: list[int]) -> list[int]:
    """The translator ids a text never shows, as decode(skip_special_tokens=True) drops them:
    the language `codes` given, the named specials and the rows without a piece (<extra:ID>)."""
    shown = set(vocab.values()) - set(codes.values()) - {vocab[n] for n in NAMED if n in vocab}
    return [t for t, hf in enumerate(ids) if t >= len(SPECIAL_PIECES) and hf not in shown]


def check_pieces(spm: bytes, vocab: dict[str, int], where: str) -> None:
    """The sentencepiece model's pieces must be the tokenizer's, at id + 1 (fairseq's
    offset), or the ids translator gives a text are not the model's."""
    import sentencepiece

    sp = sentencepiece.SentencePieceProcessor(model_proto=spm)
    for i in range(sp.get_piece_size()):
        if sp.is_control(i) or sp.is_unknown(i):
            continue
        piece = sp.id_to_piece(i)
        if vocab.get(piece) != i + 1:
            raise UserError(
                f"{where}: piece {piece!r} is {i} in {SPM_FILE} but {vocab.get(piece)} in "
                "tokenizer.json (fairseq's ids are sentencepiece's + 1)"
            )


def table_weights(w: Weights, config: dict, ids: list[int]) -> dict[str, torch.Tensor]:
    """Embeddings, output projection and logits bias, rows in translator's id order; the
    tables read as Marian's are (an untied model may hold three different ones)."""
    src, tgt, head = embedding_tables(w, config)
    for name, rows in (("the embeddings", src), ("the embeddings", tgt), ("lm_head", head)):
        if rows.size(0) != config["vocab_size"]:
            raise UserError(
                f"{w.where}: {name} have {rows.size(0)} rows but config.json vocab_size "
                f"{config['vocab_size']}"
            )
    index = torch.tensor(ids)
    bias = torch.zeros(len(ids))
    # <s> repeats the start row (</s>, also ours at </s>): it must take no second share of
    # the softmax, or every probability would differ from the model's
    bias[BOS] = NEVER
    return {
        "src_embed.weight": src[index],
        "tgt_embed.weight": tgt[index],
        "generator.weight": head[index],
        "generator.bias": bias,
    }


def translator_config(
    config: dict, tok: dict, vocab_size: int, codes: list[str], share: bool = True
) -> dict:
    """The resolved translator config of the model (`share`: one embedding table); the data
    section's languages are the tokenizer's src_lang and tgt_lang where
    tokenizer_config.json names them."""
    # logits_bias: zeros, but for <s> (table_weights)
    model = bart_model(config, LAYOUT, logits_bias=True, share_embeddings=share)
    # without src_lang, NllbTokenizer and M2M100Tokenizer read a source as English
    english = next((c for c in ENGLISH if c in codes), codes[0])
    src = tok.get("src_lang") if tok.get("src_lang") in codes else english
    # a tokenizer that names no target (NLLB-200's) leaves it to each call's --tgt-lang:
    # "mul" (ISO 639's "multiple languages") is no code, so a call that names none is refused
    tgt = tok.get("tgt_lang") if tok.get("tgt_lang") in codes else NO_TARGET
    data = data_section(src, tgt)
    raw = {"model": model, "data": data, "tokenizer": {"joint": True, "vocab_size": vocab_size}}
    return config_from_dict(raw, "the imported model's config").to_dict()


def import_folder(folder: Path, origin: dict) -> Checkpoint:
    """The checkpoint of the M2M100 model in `folder`; `origin`: where it came from."""
    where = str(folder)
    config = read_json(folder, "config.json")
    check_config(folder, config)
    if (folder / "source.spm").is_file() and not (folder / SPM_FILE).is_file():
        # MarianTokenizer's files: translator's export of a model it trained
        return marian.import_folder(folder, origin, LAYOUT, "huggingface-m2m100-marian")
    tok = read_json(folder, "tokenizer_config.json", required=False) or {}
    if tok.get("legacy_behaviour"):
        raise UserError(
            f"{folder}: tokenizer_config.json legacy_behaviour true (the language code after "
            "the source) is not supported; translator puts the code first"
        )
    vocab, codes = hf_vocabulary(folder, tok)
    if not codes:
        raise UserError(f"{folder / 'tokenizer.json'}: no language codes among its added tokens")
    spm = read_spm(folder, SPM_FILE)
    if (folder / "tokenizer.json").is_file():  # (vocab.json numbers pieces its own way)
        check_pieces(spm, vocab, where)
    ids, pieces = id_table(vocab, config, where)
    # M2M100Tokenizer's decode keeps its __xx__ codes (they are not its special tokens)
    special = codes if (folder / "tokenizer.json").is_file() else {}
    tokenizer = VocabTokenizer(spm, None, pieces, hidden=hidden_ids(vocab, special, ids))
    w = Weights(read_weights(folder), where)
    weights = {**table_weights(w, config, ids), **layer_weights(w, config), **stack_norms(w)}
    share = torch.equal(weights["src_embed.weight"], weights["tgt_embed.weight"])
    cfg = translator_config(config, tok, len(ids), list(codes), share)
    ckpt = Checkpoint(config=cfg, tokenizer=tokenizer.state(), model=weights)
    model = build_model(config_from_dict(cfg).model, len(ids), len(ids), tokenizer.joint)
    check_shapes(model, weights, folder)
    ckpt.load_weights(model, where)  # the names and shapes are ours: a mismatch is a bug here
    ckpt.model = model.state_dict()
    where_in_table = {hf: i for i, hf in reversed(list(enumerate(ids)))}
    ckpt.source = {
        "format": "huggingface-m2m100",
        **origin,
        "config": config,
        "tokenizer_config": json.loads(json.dumps(tok, default=str)),
        # as they came, for the Hugging Face export: their ids are the model's, which
        # transformers' rebuild from the sentencepiece model alone need not give
        "tokenizer_files": {
            name: (folder / name).read_text(encoding="utf-8")
            for name in TOKENIZER_FILES
            if (folder / name).is_file()
        },
        "ids": {"src": ids, "tgt": None},
        # each language code's translator id: the source's first id and the target's forced
        # first id (engines/lang_codes.py)
        "languages": {code: where_in_table[i] for code, i in codes.items()},
        "files": card(folder),
    }
    return ckpt
