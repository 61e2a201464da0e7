"""Constrained decoding on a test set: oracle phrases and reference prefixes, one JSON line
per run (docs/benchmarks.md).

    python scripts/bench/bench_constraints.py --checkpoint runs/multi30k_transformer/best.pt \\
        --set data.dir=../shared/data/multi30k

- **Oracle constraints**: for each test sentence one or two content words of its reference
  (drawn with a fixed seed, no stopwords), kept in --phrases (written on the first run, read
  on later ones, so runs compare). BLEU and sentences/s without and with them, and the share
  of phrases the translations hold.
- **Prefix**: the first half of each reference's words as the prefix. The share of outputs
  that begin with it, and BLEU of the completions (what follows the prefix) against the
  second half of the reference.

The rows of one call share the machine's state, so their speed ratio is meaningful; the
absolute figures vary with its load.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import time
from pathlib import Path

from translator.config import config_from_dict
from translator.data.corpus import load_split
from translator.decode.evaluate import bleu, honoured
from translator.engines.load import load_engine
from translator.runtime import set_threads

STOPWORDS = set(
    """a an the and or but of in on at to for with from by as is are was were be been being
    his her their its our your my this that these those there here it he she they we you i
    him them who whom which what while into onto over under up down out off near next than
    then some one two three four five several many few more most other another each both all
    not no very while has have had do does did can could will would should may might
    """.split()
)


def oracle_phrases(references: list[str], seed: int) -> list[list[str]]:
    """One or two content words of each reference, drawn with `seed`."""
    rng = random.Random(seed)
    out = []
    for ref in references:
        words = [w for w in re.findall(r"[A-Za-z]+", ref) if len(w) > 2]
        content = list(dict.fromkeys(w for w in words if w.lower() not in STOPWORDS))
        out.append(rng.sample(content, min(len(content), rng.choice([1, 2]))))
    return out


def run(translator, sources, dc, **guides) -> tuple[list[str], float]:
    start = time.perf_counter()
    request = translator.request(decode=dc)
    if guides:
        request = request.guided(translator.tokenizer, sources, translator.max_target, **guides)
    results = translator.translate(sources, request)
    return [r[0].text for r in results], time.perf_counter() - start


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--checkpoint", required=True)
    ap.add_argument("--set", action="append", default=[], dest="overrides")
    ap.add_argument("--split", default="test")
    ap.add_argument("--beam", type=int, default=5)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--phrases", default="results/constraints_oracle_multi30k_test.tsv")
    args = ap.parse_args()
    set_threads(args.threads)
    translator = load_engine(args.checkpoint, "cpu")
    cfg = config_from_dict(translator.cfg.to_dict(), "the checkpoint's config", args.overrides)
    pairs = load_split(cfg.data, args.split, cfg.seed)
    sources, refs = [s for s, _ in pairs], [t for _, t in pairs]
    path = Path(args.phrases)
    if path.exists():
        phrases = [line.split("\t") if line else [] for line in path.read_text().split("\n")[:-1]]
    else:
        phrases = oracle_phrases(refs, args.seed)
        path.write_text("".join("\t".join(p) + "\n" for p in phrases), encoding="utf-8")
    assert len(phrases) == len(sources), f"{path} has {len(phrases)} lines for {len(sources)}"
    dc = cfg.decode.replace(beam=args.beam)
    base = {"checkpoint": args.checkpoint, "beam": args.beam, "n": len(sources)}
    plain, plain_s = run(translator, sources, dc)
    held, held_s = run(translator, sources, dc, constraints=phrases)
    for name, hyps, seconds, musts in (
        ("unconstrained", plain, plain_s, phrases),
        ("oracle constraints", held, held_s, phrases),
    ):
        count = honoured(hyps, musts)
        row = {**base, "run": name, "bleu": round(bleu(hyps, refs), 2),
               "sentences_per_s": round(len(sources) / seconds, 1),
               "phrases": count["given"],
               "honoured": round(count["honoured"] / max(1, count["given"]), 4)}  # fmt: skip
        print(json.dumps(row), flush=True)
    halves = [r.split() for r in refs]
    prefixes = [" ".join(w[: len(w) // 2]) for w in halves]
    completed, seconds = run(translator, sources, dc, prefixes=prefixes)
    begins = sum(h.startswith(p) for h, p in zip(completed, prefixes))
    rests = [h[len(p) :].strip() for h, p in zip(completed, prefixes)]
    seconds_halves = [" ".join(w[len(w) // 2 :]) for w in halves]
    row = {**base, "run": "reference prefix (first half)",
           "begins_with_prefix": round(begins / len(sources), 4),
           "completion_bleu": round(bleu(rests, seconds_halves), 2),
           "sentences_per_s": round(len(sources) / seconds, 1)}  # fmt: skip
    print(json.dumps(row), flush=True)


if __name__ == "__main__":
    main()
