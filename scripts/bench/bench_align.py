"""Alignment error rate of checkpoints' word alignments against eflomal's (docs/alignment_training.md):
one JSON line per checkpoint and way of reading its attention.

    python scripts/bench/bench_align.py --checkpoint runs/multi30k_transformer_align/best.pt \\
        runs/multi30k_transformer/best.pt --output results/bench_align.jsonl

Each reference of the test set is forced through the model (as `score --alignments` does:
the model reads it one step at a time, as a search feeds its output), and the alignment
layer's attention becomes word alignments by translator/decode/alignment.py (each reference
word to the source word with the most attention). The gold standard is eflomal's
symmetrised (grow-diag-final-and) alignment of each source and its reference, aligned
together with the training pairs (--train-pairs) so that eflomal has the statistics of a
corpus; words are `text.split()` on both sides. Since eflomal also made the alignments the
guided head was trained on, this measures how closely the head reproduces the aligner, not
whether either is right. A model with a guided head is measured twice: by that head (what
alignments read) and by the mean of its layer's heads (raw attention).

AER = 1 - 2 |A & G| / (|A| + |G|) (Och and Ney 2003 with every gold link sure), with the
precision |A & G| / |A| and recall |A & G| / |G| beside it.
"""

from __future__ import annotations

import argparse
import gzip
import json
import sys
import time
from pathlib import Path

import torch

from translator.data.align import align_texts
from translator.decode.alignment import forced_attention, word_alignment
from translator.models.checkpoint import Checkpoint

DATA = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "multi30k"


def read_lines(path: Path, limit: int | None = None) -> list[str]:
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as f:
        lines = [line.rstrip("\n") for line in f]
    return lines[:limit] if limit is not None else lines


def gold_alignments(data: Path, split: str, src: str, tgt: str, train_pairs: int, limit):
    """(sources, references, eflomal's alignments of each pair)."""
    sources = read_lines(data / f"{split}.{src}.gz", limit)
    references = read_lines(data / f"{split}.{tgt}.gz", limit)
    extra_src = read_lines(data / f"train.{src}.gz", train_pairs) if train_pairs else []
    extra_tgt = read_lines(data / f"train.{tgt}.gz", train_pairs) if train_pairs else []
    found = align_texts(sources + extra_src, references + extra_tgt)
    return sources, references, [set(links) for links in found[: len(sources)]]


def model_alignments(model, tokenizer, sources, references, batch: int = 64) -> list[set]:
    """Word alignments of each (source, reference) from the model's alignment layer."""
    out: list[set] = [set() for _ in sources]
    order = sorted(range(len(sources)), key=lambda i: len(sources[i]))
    layer = model.alignment_layer
    for b0 in range(0, len(order), batch):
        rows = order[b0 : b0 + batch]
        src = tokenizer.encode_src([sources[i] for i in rows])
        tgt = [t[1:-1] for t in tokenizer.encode_tgt([references[i] for i in rows])]
        width = max(map(len, src))
        padded = torch.tensor([s + [0] * (width - len(s)) for s in src])
        weights = forced_attention(model, padded, tgt, layer)
        for i, s, t, w in zip(rows, src, tgt, weights):
            src_pieces = [tokenizer.src.id_to_piece(x) for x in s[:-1]]  # without </s>
            tgt_pieces = [tokenizer.tgt.id_to_piece(x) for x in t]
            out[i] = set(word_alignment(w, src_pieces, tgt_pieces, sources[i], references[i]))
    return out


def scores(found: list[set], gold: list[set]) -> dict:
    both = sum(len(a & g) for a, g in zip(found, gold))
    a, g = sum(map(len, found)), sum(map(len, gold))
    return {
        "aer": round(1 - 2 * both / max(1, a + g), 4),
        "precision": round(both / max(1, a), 4),
        "recall": round(both / max(1, g), 4),
        "links": a,
        "gold_links": g,
    }


def readings(model, cfg):
    """(name, a function that sets the model up to read that way) for each way to measure."""
    layer = model.alignment_layer
    cross = model.decoder[layer].cross_attn if hasattr(model, "decoder") else None
    head = getattr(cross, "align_head", None)
    mean = f"layer {layer}, mean of heads"
    if head is None:
        return [(mean, lambda: None)]
    guided = " (guided)" if cfg.train.guided_alignment else ""

    def take_mean():
        cross.align_head = None

    return [(f"layer {layer}, head {head}{guided}", lambda: None), (mean, take_mean)]


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--checkpoint", nargs="+", required=True)
    p.add_argument("--data", type=Path, default=DATA, help="folder of Multi30k's gzipped files")
    p.add_argument("--split", default="test_2016_flickr")
    p.add_argument("--src-lang", default="de")
    p.add_argument("--tgt-lang", default="en")
    p.add_argument("--train-pairs", type=int, default=29000, help="aligned along (0: none)")
    p.add_argument("--limit", type=int, default=None, help="test pairs (default: all)")
    p.add_argument("--output", type=Path, help="append the JSON lines to this file too")
    args = p.parse_args(argv)
    start = time.perf_counter()
    sources, references, gold = gold_alignments(
        args.data, args.split, args.src_lang, args.tgt_lang, args.train_pairs, args.limit
    )
    eflomal_seconds = round(time.perf_counter() - start, 1)
    rows = []
    for path in args.checkpoint:
        cfg, tokenizer, model = Checkpoint.load(path).build(path)
        model.eval()
        for name, setup in readings(model, cfg):
            setup()
            found = model_alignments(model, tokenizer, sources, references)
            rows.append({"checkpoint": path, "reading": name, "pairs": len(sources),
                         **scores(found, gold), "split": args.split,
                         "train_pairs_aligned_along": args.train_pairs,
                         "eflomal_seconds": eflomal_seconds})  # fmt: skip
            print(json.dumps(rows[-1]), flush=True)
    if args.output:
        with open(args.output, "a", encoding="utf-8") as f:
            f.writelines(json.dumps(r) + "\n" for r in rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
