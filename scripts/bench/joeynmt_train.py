"""JoeyNMT's training speed on the same corpus, sizes and batches as bench_train.py.

    python scripts/bench/joeynmt_train.py --corpus bench_data/synthetic --langs xs xt \
        --spm bench_data/cache/sentencepiece/MODEL.model --d-model 1024 --heads 16 \
        --ff 4096 --batch-tokens 26500 --fp16 --output results/gpu_train.jsonl

Writes a JoeyNMT 2.3 config for a pre-norm Transformer with tied embeddings and softmax,
the corpus as plain text (JoeyNMT reads no .gz), the sentencepiece model given (the one
translator trained for the corpus) and its pieces as the vocabulary; runs `python -m
joeynmt train`, and stops it once `--logs` log lines have passed the `--skip` first ones.
JoeyNMT's own "Tokens per Sec" (real target tokens over the time between log lines) is
the figure; the line reports their mean. Its `batch_size` with `batch_type: token` caps
rows x the longer side, padding included, as translator's train.batch_tokens does.
"""

from __future__ import annotations

import argparse
import datetime
import gzip
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import sentencepiece as spm
import yaml

# sentencepiece 0.2 has no SetVocabulary, which JoeyNMT calls to restrict the model to its
# vocabulary file; that file lists every piece of the model, so a no-op stands in for it.
LAUNCH = """
import runpy, sys
import sentencepiece
if not hasattr(sentencepiece.SentencePieceProcessor, "SetVocabulary"):
    sentencepiece.SentencePieceProcessor.SetVocabulary = lambda self, pieces: None
sys.argv = ["joeynmt", "train", sys.argv[1], "--skip-test"]
runpy.run_module("joeynmt", run_name="__main__")
"""
RATE = re.compile(r"Step:\s+(\d+),.*Tokens per Sec:\s+([\d.]+)")
HALF = re.compile(r"16-bits training:\s+(True|False)")


def side(lang: str, vocab: Path, model: Path) -> dict:
    return {
        "lang": lang,
        "level": "bpe",
        "lowercase": False,
        "max_length": 200,
        "voc_file": str(vocab),
        "tokenizer_type": "sentencepiece",
        "tokenizer_cfg": {"model_file": str(model)},
    }


def stack(args) -> dict:
    return {
        "type": "transformer",
        "num_layers": args.layers,
        "num_heads": args.heads,
        "embeddings": {"embedding_dim": args.d_model, "scale": True},
        "hidden_size": args.d_model,
        "ff_size": args.ff,
        "dropout": 0.1,
        "layer_norm": "pre",
    }


def config(args, work: Path, vocab: Path) -> dict:
    src, tgt = args.langs
    return {
        "name": "bench",
        "joeynmt_version": "2.3.0",
        "fp16": args.fp16,  # a top-level key in JoeyNMT 2.3 (under training it is ignored)
        "use_cuda": True,
        "data": {
            "train": str(work / "train"),
            "dev": str(work / "dev"),
            "dataset_type": "plain",
            "src": side(src, vocab, args.spm),
            "trg": side(tgt, vocab, args.spm),
        },
        "training": {
            "model_dir": str(work / "model"),
            "overwrite": True,
            "optimizer": "adamw",
            "adam_betas": [0.9, 0.98],
            "learning_rate": 0.0007,
            "scheduling": "warmupinversesquareroot",
            "learning_rate_warmup": 4000,
            "loss": "crossentropy",
            "label_smoothing": 0.1,
            "batch_size": args.batch_tokens,
            "batch_type": "token",
            "eval_batch_size": 64,
            "epochs": 1000,
            "updates": 1000000,
            "validation_freq": 1000000,
            "logging_freq": args.log_every,
            "shuffle": True,
            "random_seed": 1,
            "keep_best_ckpts": 1,
            "num_workers": 0,
        },
        "testing": {"beam_size": 5, "alpha": 1.0, "batch_size": 64, "batch_type": "sentence"},
        "model": {
            "initializer": "xavier_uniform",
            "embed_initializer": "xavier_uniform",
            "tied_embeddings": True,
            "tied_softmax": True,
            "encoder": stack(args),
            "decoder": stack(args),
        },
    }


def write_corpus(args, work: Path) -> tuple[Path, int]:
    for split in ("train", "dev"):
        for lang in args.langs:
            with gzip.open(args.corpus / f"{split}.{lang}.gz", "rt", encoding="utf-8") as f:
                (work / f"{split}.{lang}").write_text(f.read(), encoding="utf-8")
    sp = spm.SentencePieceProcessor(model_file=str(args.spm))
    pieces = [sp.id_to_piece(i) for i in range(sp.get_piece_size())]
    keep = [p for i, p in enumerate(pieces) if not (sp.is_control(i) or sp.is_unknown(i))]
    vocab = work / "vocab.txt"
    vocab.write_text("\n".join(keep) + "\n", encoding="utf-8")
    return vocab, len(pieces)


def run(args, cfg_path: Path) -> tuple[list[tuple[int, float]], bool | None]:
    """(step, tokens/s) of each log line, until `skip + logs` lines or the process ends, and
    whether JoeyNMT says it trains in 16 bits."""
    rates, half = [], None
    cmd = [sys.executable, "-c", LAUNCH, str(cfg_path)]
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    with subprocess.Popen(
        cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env
    ) as proc:
        for line in proc.stdout:
            print(line, end="", file=sys.stderr)
            if m := HALF.search(line):
                half = m.group(1) == "True"
            if m := RATE.search(line):
                rates.append((int(m.group(1)), float(m.group(2))))
                if len(rates) >= args.skip + args.logs:
                    proc.terminate()
                    break
        proc.wait()
    return rates, half


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", type=Path, required=True, help="{train,dev}.{lang}.gz")
    ap.add_argument("--langs", nargs=2, required=True)
    ap.add_argument("--spm", type=Path, required=True, help="a joint sentencepiece model")
    ap.add_argument("--d-model", type=int, default=512)
    ap.add_argument("--heads", type=int, default=8)
    ap.add_argument("--ff", type=int, default=2048)
    ap.add_argument("--layers", type=int, default=6)
    ap.add_argument("--batch-tokens", type=int, default=26500)
    ap.add_argument("--fp16", action="store_true", help="JoeyNMT's fp16: True")
    ap.add_argument("--log-every", type=int, default=10, help="steps between log lines")
    ap.add_argument("--skip", type=int, default=2, help="log lines of warm-up, not counted")
    ap.add_argument("--logs", type=int, default=5, help="log lines counted")
    ap.add_argument("--output", help="also append the JSON line to this file")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="joeynmt-bench-") as folder:
        work = Path(folder)
        vocab, size = write_corpus(args, work)
        cfg_path = work / "config.yaml"
        cfg_path.write_text(yaml.safe_dump(config(args, work, vocab)), encoding="utf-8")
        rates, half = run(args, cfg_path)
    counted = rates[args.skip :]
    row = {
        "date": datetime.date.today().isoformat(),
        "toolkit": "joeynmt 2.3.0",
        "device": device_name(),
        "d_model": args.d_model,
        "layers": [args.layers, args.layers],
        "vocabulary": size,
        "dtype": {True: "float16", False: "float32"}.get(half),  # as JoeyNMT reports it
        "batch_tokens": args.batch_tokens,
        "steps_counted": len(counted) * args.log_every,
        "target_tokens_per_s": round(sum(r for _, r in counted) / len(counted))
        if counted
        else None,
    }
    line = json.dumps(row)
    print(line, flush=True)
    if args.output:
        with open(args.output, "a", encoding="utf-8") as f:
            f.write(line + "\n")


def device_name() -> str:
    import torch

    return torch.cuda.get_device_name() if torch.cuda.is_available() else "cpu"


if __name__ == "__main__":
    main()
