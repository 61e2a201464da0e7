"""Released-model folders of the M2M100/NLLB import tests: a tiny Hugging Face
M2M100ForConditionalGeneration with random weights and an NllbTokenizer built on a locally
trained sentencepiece model (BPE, as NLLB's sentencepiece.bpe.model), language codes after
the pieces."""

from __future__ import annotations

import io
import json
from pathlib import Path

from pretrained import demo_pairs

LANGUAGES = ("deu_Latn", "eng_Latn", "fra_Latn")
EXTRA_ROWS = 3  # embedding rows past the tokenizer's ids, as released models have


def train_bpe(lines: list[str], size: int) -> bytes:
    """A BPE sentencepiece model (<unk> 0, <s> 1, </s> 2, then its pieces)."""
    import sentencepiece as spm

    out = io.BytesIO()
    spm.SentencePieceTrainer.train(
        sentence_iterator=iter(lines),
        model_writer=out,
        vocab_size=size,
        model_type="bpe",
        hard_vocab_limit=False,
        num_threads=1,
        minloglevel=2,
    )
    return out.getvalue()


def nllb_folder(
    folder: Path,
    seed: int = 0,
    tgt_lang: str | None = "eng_Latn",
    eos_bias: float = 7.0,
    layer_gain: float = 10.0,
) -> Path:
    """A saved M2M100ForConditionalGeneration (d_model 32, 2+2 layers, 4 heads, ffn 64) with
    random weights, its NllbTokenizer (tokenizer.json, tokenizer_config.json with src_lang
    deu_Latn and `tgt_lang`) and sentencepiece.bpe.model."""
    import torch
    from transformers import M2M100Config, M2M100ForConditionalGeneration, NllbTokenizer

    pairs = demo_pairs()["train"]
    spm = train_bpe([s for s, _ in pairs] + [t for _, t in pairs], 400)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "sentencepiece.bpe.model").write_bytes(spm)
    tok = NllbTokenizer.from_pretrained(
        folder, src_lang="deu_Latn", tgt_lang=tgt_lang, extra_special_tokens=list(LANGUAGES)
    )
    config = M2M100Config(
        vocab_size=len(tok) + EXTRA_ROWS,
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
        init_std=0.3,  # far from uniform outputs, so greedy choices say something
    )
    torch.manual_seed(seed)
    model = M2M100ForConditionalGeneration(config)
    with torch.no_grad():  # LayerNorms start at 1 and 0, which would test little
        for name, p in model.named_parameters():
            if "layer_norm" in name:
                p.add_(torch.randn_like(p) * 0.2)
            elif name.endswith(("fc2.weight", "out_proj.weight")):
                p.mul_(layer_gain)  # (else the scaled embeddings outweigh the layers)
        # M2M100 has no logits bias: the decoder's last LayerNorm bias leans towards </s>
        # (about `eos_bias` on its logit), so outputs end at varied lengths
        eos = model.model.shared.weight[config.eos_token_id]
        model.model.decoder.layer_norm.bias.add_(eos * eos_bias / eos.dot(eos))
    model.save_pretrained(folder)
    tok.save_pretrained(folder)
    if tgt_lang is None:  # (the tokenizer writes null)
        path = folder / "tokenizer_config.json"
        data = json.loads(path.read_text(encoding="utf-8"))
        data.pop("tgt_lang", None)
        path.write_text(json.dumps(data), encoding="utf-8")
    (folder / "README.md").write_text("# tiny-nllb\nA random test model.\n", encoding="utf-8")
    (folder / "LICENSE").write_text("CC-BY-NC 4.0 (test)\n", encoding="utf-8")
    return folder
