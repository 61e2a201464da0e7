"""Released-model folders the import tests make: tiny Hugging Face MarianMT models with random
weights, their own sentencepiece models and a vocab.json whose ids are not sentencepiece's."""

from __future__ import annotations

import io
import json
import random
from pathlib import Path

from commandline import assert_success_or_one_error

SENTENCES = 100  # the exactness checks' sentences (demo test split)


def demo_pairs():
    from translator.data.demo import demo_splits

    return demo_splits(400, 10, SENTENCES, seed=7)


def train_spm(lines: list[str], size: int, model_type: str = "unigram") -> bytes:
    """A sentencepiece model with its own default ids (<unk> 0, <s> 1, </s> 2), as Marian's."""
    import sentencepiece as spm

    out = io.BytesIO()
    spm.SentencePieceTrainer.train(
        sentence_iterator=iter(lines),
        model_writer=out,
        vocab_size=size,
        model_type=model_type,
        hard_vocab_limit=False,
        num_threads=1,
        minloglevel=2,
    )
    return out.getvalue()


def marian_vocab(models: list[bytes], seed: int) -> dict[str, int]:
    """Marian's layout: </s> 0, <unk> 1, the pieces of the models shuffled, <pad> last;
    three pieces are left out (they encode to <unk> on both sides)."""
    import sentencepiece as spm

    pieces = []
    for data in models:
        sp = spm.SentencePieceProcessor(model_proto=data)
        pieces += [sp.id_to_piece(i) for i in range(3, sp.get_piece_size())]
    pieces = sorted(set(pieces) - {"</s>", "<unk>", "<pad>"})
    random.Random(seed).shuffle(pieces)
    return {p: i for i, p in enumerate(["</s>", "<unk>", *pieces[3:], "<pad>"])}


def marian_folder(
    folder: Path,
    share: bool = True,
    tie: bool = True,
    activation: str = "gelu",
    separate_vocabs: bool = False,
    seed: int = 0,
    eos_bias: float = 5.0,
) -> Path:
    """A saved MarianMTModel (d_model 32, 2+2 layers, 4 heads, ffn 64) with random weights and
    a random final_logits_bias, its subword models, vocab.json and tokenizer_config.json;
    `separate_vocabs`: a vocabulary per side (target_vocab.json), of different sizes."""
    import torch
    from transformers import MarianConfig, MarianMTModel

    pairs = demo_pairs()["train"]
    src_spm = train_spm([s for s, _ in pairs], 150)
    tgt_spm = train_spm([t for _, t in pairs], 120)
    vocab = marian_vocab([src_spm, tgt_spm], seed)
    src_vocab = marian_vocab([src_spm], seed) if separate_vocabs else vocab
    vocab = marian_vocab([tgt_spm], seed) if separate_vocabs else vocab
    pad = vocab["<pad>"]
    config = MarianConfig(
        vocab_size=len(src_vocab),
        decoder_vocab_size=len(vocab),
        d_model=32,
        encoder_layers=2,
        decoder_layers=2,
        encoder_attention_heads=4,
        decoder_attention_heads=4,
        encoder_ffn_dim=64,
        decoder_ffn_dim=64,
        activation_function=activation,
        max_position_embeddings=128,
        pad_token_id=pad,
        eos_token_id=vocab["</s>"],
        decoder_start_token_id=pad,
        share_encoder_decoder_embeddings=share,
        tie_word_embeddings=tie,
        scale_embedding=True,
        init_std=0.3,  # far from uniform outputs, so greedy choices say something
    )
    torch.manual_seed(seed)
    model = MarianMTModel(config)
    with torch.no_grad():
        model.final_logits_bias.normal_(0.0, 1.0)  # zero at init, which would test nothing
        model.final_logits_bias[0, vocab["</s>"]] += eos_bias  # outputs of varied lengths
    model.save_pretrained(folder)
    (folder / "source.spm").write_bytes(src_spm)
    (folder / "target.spm").write_bytes(tgt_spm)
    (folder / "vocab.json").write_text(json.dumps(src_vocab, ensure_ascii=False), encoding="utf-8")
    if separate_vocabs:
        text = json.dumps(vocab, ensure_ascii=False)
        (folder / "target_vocab.json").write_text(text, encoding="utf-8")
    tok = {"source_lang": "de", "target_lang": "en", "separate_vocabs": separate_vocabs}
    (folder / "tokenizer_config.json").write_text(json.dumps(tok), encoding="utf-8")
    (folder / "README.md").write_text("# tiny-marian\nA random test model.\n", encoding="utf-8")
    (folder / "LICENSE").write_text("CC-BY 4.0 (test)\n", encoding="utf-8")
    return folder


def one_line_error(code: int, err: str, *needles: str) -> str:
    """The error line of a command that failed as a user's mistake (exit 2, no traceback),
    with nothing else on stderr; it holds every needle."""
    line = assert_success_or_one_error(code, err)
    assert line is not None and err.strip() == line, (code, err[-2000:])
    for needle in needles:
        assert needle in line, (needle, line)
    return line


class EndAtLimit:
    """A transformers logits processor: once the output holds `length` ids (its start
    included), only </s> remains, at its own log-probability, as translator's search ends an
    output at its limit (transformers' forced_eos_token_id gives that </s> a log-probability
    of 0 and so ranks the hypotheses that reach the limit otherwise)."""

    def __init__(self, eos: int, length: int):
        self.eos, self.length = eos, length

    def __call__(self, input_ids, scores):
        if input_ids.size(1) == self.length:
            end = scores[:, self.eos].clone()
            scores[:] = float("-inf")
            scores[:, self.eos] = end
        return scores
