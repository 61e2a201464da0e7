"""A synthetic parallel corpus with the sentence lengths of a news-sized corpus, for speed runs.

    python scripts/bench/synthetic_corpus.py bench_data/synthetic --pairs 100000

Multi30k's captions are short (about 13 words); a WMT corpus's sentences average about 22
words with a long tail, and a GPU's speed depends on those lengths and their padding. Each
source sentence draws its length from a log-normal (median 18 words, capped at 100), its
words from a Zipf-distributed lexicon of made-up words; the target is a word-by-word
rendering into a second lexicon with some words dropped and added, so target lengths follow
the source's as a translation's do. Writes train/dev/test.{src,tgt}.gz (languages `xs` and
`xt`). The content means nothing: use it for speed, never for BLEU.
"""

from __future__ import annotations

import argparse
import gzip
from pathlib import Path

import numpy as np

SYLLABLES = [c + v for c in "bdfgklmnprstvz" for v in "aeiou"] + ["an", "er", "in", "or", "us"]


def lexicon(rng: np.random.Generator, size: int) -> np.ndarray:
    """`size` distinct made-up words of 1 to 4 syllables, frequent ones shorter."""
    words: dict[str, None] = {}
    while len(words) < size:
        n = 1 + min(3, int(rng.exponential(0.3 + 2.0 * len(words) / size)))
        words["".join(rng.choice(SYLLABLES, n))] = None
    return np.array(list(words))


def sentences(rng, pairs: int, src_words, tgt_words, zipf: float):
    ranks = np.arange(1, len(src_words) + 1)
    weights = ranks**-zipf
    weights /= weights.sum()
    lengths = np.clip(np.rint(rng.lognormal(np.log(18), 0.6, pairs)), 1, 100).astype(int)
    for n in lengths:
        ids = rng.choice(len(src_words), n, p=weights)
        kept = ids[rng.random(n) > 0.08]  # the target drops some words and adds others
        extra = rng.choice(len(tgt_words), rng.binomial(n, 0.12), p=weights)
        tgt = np.concatenate([kept, extra]) if len(kept) + len(extra) else ids[:1]
        yield " ".join(src_words[ids]) + " .", " ".join(tgt_words[tgt]) + " ."


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("folder", type=Path)
    ap.add_argument("--pairs", type=int, default=100_000, help="training pairs")
    ap.add_argument("--held-out", type=int, default=1000, help="dev and test pairs each")
    ap.add_argument("--lexicon", type=int, default=40_000, help="words per language")
    ap.add_argument("--zipf", type=float, default=1.1)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    rng = np.random.default_rng(args.seed)
    src_words, tgt_words = lexicon(rng, args.lexicon), lexicon(rng, args.lexicon)
    args.folder.mkdir(parents=True, exist_ok=True)
    for split, n in (("train", args.pairs), ("dev", args.held_out), ("test", args.held_out)):
        with (
            gzip.open(args.folder / f"{split}.xs.gz", "wt", encoding="utf-8") as fs,
            gzip.open(args.folder / f"{split}.xt.gz", "wt", encoding="utf-8") as ft,
        ):
            for s, t in sentences(rng, n, src_words, tgt_words, args.zipf):
                fs.write(s + "\n")
                ft.write(t + "\n")
    print(f"{args.folder}: {args.pairs:,} training pairs, {args.held_out:,} dev and test pairs")


if __name__ == "__main__":
    main()
