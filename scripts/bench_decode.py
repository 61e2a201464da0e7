"""Decoding speed: sentences/s and target tokens/s, greedy and beam, one JSON line per run.

    python scripts/bench_decode.py --checkpoint runs/multi30k_transformer/best.pt \
        --set data.dir=../shared/data/multi30k

For a Transformer it also decodes without the key/value cache and reports the
speed-up and whether both outputs are identical. All runs of one call share the
machine's state, so their ratios are meaningful; absolute figures vary with load.
"""

from __future__ import annotations

import argparse
import json
import time
from dataclasses import replace

from translator.config import config_from_dict
from translator.data.corpus import load_split
from translator.evaluate import bleu
from translator.inference import Translator
from translator.runtime import set_threads


def timed(translator: Translator, sources: list[str], dc) -> tuple[list[str], float, int]:
    start = time.perf_counter()
    results = translator.translate(sources, dc)
    seconds = time.perf_counter() - start
    tokens = sum(len(r[0].tokens) + 1 for r in results)  # with <eos>
    return [r[0].text for r in results], seconds, tokens


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--checkpoint", action="append", required=True)
    ap.add_argument("--set", action="append", default=[], dest="overrides")
    ap.add_argument("--split", default="test", choices=["dev", "test"])
    ap.add_argument("--beam", action="append", type=int, help="beam sizes (default 1 and 5)")
    ap.add_argument("--batch-size", type=int, default=64)
    ap.add_argument("--limit", type=int, default=0, help="first N sentences only")
    ap.add_argument("--threads", type=int, default=0)
    args = ap.parse_args()
    set_threads(args.threads)
    for path in args.checkpoint:
        translator = Translator.from_checkpoint(path, "auto")
        cfg = config_from_dict(translator.cfg.to_dict(), path, args.overrides)
        pairs = load_split(cfg.data, args.split, cfg.seed)
        if args.limit:
            pairs = pairs[: args.limit]
        sources, refs = [s for s, _ in pairs], [t for _, t in pairs]
        model = translator.model
        caches = [True, False] if model.uncached_step else [True]
        for beam in args.beam or [1, 5]:
            dc = replace(cfg.decode, beam=beam, batch_size=args.batch_size)
            outputs = {}
            for cache in caches:
                model.use_cache = cache
                hyps, seconds, tokens = timed(translator, sources, dc)
                outputs[cache] = (hyps, seconds)
                row = {
                    "checkpoint": path,
                    "family": cfg.model.type,
                    "beam": beam,
                    "cache": cache,
                    "batch_size": args.batch_size,
                    "sentences": len(sources),
                    "sentences_per_s": round(len(sources) / seconds, 1),
                    "target_tokens_per_s": round(tokens / seconds),
                    "seconds": round(seconds, 2),
                    "bleu": round(bleu(hyps, refs), 2),
                }
                if not cache:
                    row["cache_speedup"] = round(seconds / outputs[True][1], 2)
                    row["identical_to_cached"] = hyps == outputs[True][0]
                print(json.dumps(row), flush=True)
            model.use_cache = True


if __name__ == "__main__":
    main()
