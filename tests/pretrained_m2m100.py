"""Released-model folders of the M2M100/NLLB import tests: a tiny Hugging Face
M2M100ForConditionalGeneration with random weights and its tokenizer, built on a locally
trained sentencepiece model (BPE, as the releases' sentencepiece.bpe.model): an
NllbTokenizer (tokenizer.json, the language codes after the pieces) or an
M2M100Tokenizer (vocab.json in an order of its own, the __xx__ codes after it)."""

from __future__ import annotations

import json
import random
from pathlib import Path

from pretrained import demo_pairs, train_spm

LANGUAGES = ("deu_Latn", "eng_Latn", "fra_Latn")  # the NLLB folder's codes
EXTRA_ROWS = 3  # embedding rows past the tokenizer's ids, as released models have
M2M100_EXTRA = 8  # fairseq's made-up words after M2M100's 100 codes


def _spm(folder: Path) -> bytes:
    pairs = demo_pairs()["train"]
    spm = train_spm([s for s, _ in pairs] + [t for _, t in pairs], 400, "bpe")
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "sentencepiece.bpe.model").write_bytes(spm)
    return spm


def nllb_folder(folder: Path, seed: int = 0, tgt_lang: str | None = "eng_Latn", **model) -> Path:
    """A saved M2M100ForConditionalGeneration (`model`: save_model's settings) with its
    NllbTokenizer (tokenizer.json, tokenizer_config.json with src_lang deu_Latn and
    `tgt_lang`) and sentencepiece.bpe.model."""
    from transformers import NllbTokenizer

    _spm(folder)
    tok = NllbTokenizer.from_pretrained(
        folder, src_lang="deu_Latn", tgt_lang=tgt_lang, extra_special_tokens=list(LANGUAGES)
    )
    save_model(folder, len(tok) + EXTRA_ROWS, seed, **model)
    tok.save_pretrained(folder)
    if tgt_lang is None:  # (the tokenizer writes null)
        path = folder / "tokenizer_config.json"
        data = json.loads(path.read_text(encoding="utf-8"))
        data.pop("tgt_lang", None)
        path.write_text(json.dumps(data), encoding="utf-8")
    _card(folder, "tiny-nllb")
    return folder


def m2m100_folder(folder: Path, seed: int = 0, **model) -> Path:
    """A saved M2M100ForConditionalGeneration with its M2M100Tokenizer: vocab.json holds
    fairseq's specials, then the pieces shuffled (ids that are not sentencepiece's + 1);
    src_lang de, tgt_lang en; the model's rows cover the 100 codes and 8 made-up words."""
    import sentencepiece
    from transformers import M2M100Tokenizer

    spm = _spm(folder)
    sp = sentencepiece.SentencePieceProcessor(model_proto=spm)
    pieces = [sp.id_to_piece(i) for i in range(3, sp.get_piece_size())]
    random.Random(seed).shuffle(pieces)
    vocab = {p: i for i, p in enumerate(["<s>", "<pad>", "</s>", "<unk>", *pieces])}
    (folder / "vocab.json").write_text(json.dumps(vocab, ensure_ascii=False), encoding="utf-8")
    tok = M2M100Tokenizer(
        vocab_file=str(folder / "vocab.json"),
        spm_file=str(folder / "sentencepiece.bpe.model"),
        src_lang="de",
        tgt_lang="en",
    )
    save_model(folder, len(vocab) + 100 + M2M100_EXTRA, seed, **model)
    tok.save_pretrained(folder)
    _card(folder, "tiny-m2m100")
    return folder


def _card(folder: Path, name: str) -> None:
    (folder / "README.md").write_text(f"# {name}\nA random test model.\n", encoding="utf-8")
    (folder / "LICENSE").write_text("CC-BY-NC 4.0 (test)\n", encoding="utf-8")


def save_model(
    folder: Path,
    vocab_size: int,
    seed: int,
    eos_bias: float = 7.0,
    layer_gain: float = 10.0,
    tie: bool = True,
) -> None:
    """A random M2M100ForConditionalGeneration (d_model 32, 2+2 layers, 4 heads, ffn 64)
    whose greedy outputs differ with the source and end at varied lengths; `tie`: its
    tie_word_embeddings."""
    import torch
    from transformers import M2M100Config, M2M100ForConditionalGeneration

    config = M2M100Config(
        vocab_size=vocab_size,
        d_model=32,
        encoder_layers=2,
        decoder_layers=2,
        encoder_attention_heads=4,
        decoder_attention_heads=4,
        encoder_ffn_dim=64,
        decoder_ffn_dim=64,
        activation_function="relu",
        max_position_embeddings=512,
        scale_embedding=True,
        pad_token_id=1,
        bos_token_id=0,
        eos_token_id=2,
        decoder_start_token_id=2,
        init_std=0.3,
        tie_word_embeddings=tie,
    )
    torch.manual_seed(seed)
    model = M2M100ForConditionalGeneration(config)
    with torch.no_grad():  # LayerNorms start at 1 and 0, which would test little
        for name, p in model.named_parameters():
            if "layer_norm" in name:
                p.add_(torch.randn_like(p) * 0.2)
            elif name.endswith(("fc2.weight", "out_proj.weight")):
                # else the scaled embeddings outweigh the layers, and with tied output
                # rows every step repeats its input token
                p.mul_(layer_gain)
        # M2M100 has no logits bias: the decoder's last LayerNorm bias leans towards </s>
        # (about `eos_bias` on its logit), so outputs end at varied lengths
        eos = model.model.shared.weight[config.eos_token_id]
        model.model.decoder.layer_norm.bias.add_(eos * eos_bias / eos.dot(eos))
    model.save_pretrained(folder)
