"""Decoding speed: sentences/s and target tokens/s, greedy and beam, one JSON line per run.

    python scripts/bench/bench_decode.py --checkpoint runs/multi30k_transformer/best.pt \
        --set data.dir=../shared/data/multi30k

For a Transformer it also decodes without the key/value cache and reports the
speed-up and whether both outputs are identical. `--engine` picks what decodes (repeat
it; default all): `pytorch` (float32, the checkpoint as trained), `pytorch-int8`
(--quantize int8: dynamic quantization, every family), `ct2-float32` and `ct2-int8`
(the checkpoint exported to CTranslate2 in a temporary folder, for the families that
export), and `ct2-int8-vmap` (int8 with the vocabulary shortlist, `export --vocab-map`,
learnt from the checkpoint's training data; `--set` also points it at moved training
files). Every row has sentences/s, target tokens/s, BLEU and the model's size on disk
(`model_bytes`: the weights as torch.save writes them, or CTranslate2's model.bin);
rows of other engines say which share of outputs is identical to `pytorch`'s. A row's time
is the median of `--repeat` passes over the sentences, after a short warm-up pass. All runs
of one call share the machine's state, so their ratios are meaningful; absolute figures
vary with load.
"""

from __future__ import annotations

import argparse
import datetime
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

import torch

from translator.config import config_from_dict
from translator.data.corpus import load_split
from translator.decode.evaluate import bleu
from translator.engines.load import load_engine
from translator.engines.quantize import weights_bytes
from translator.runtime import set_threads

ENGINES = ("pytorch", "pytorch-int8", "ct2-float32", "ct2-int8", "ct2-int8-vmap")


def timed(translator, sources: list[str], dc, repeat: int) -> tuple[list[str], float, int]:
    """The output and the median time of `repeat` runs, after a short warm-up run (the
    first call's allocations are not decoding speed)."""
    translator.translate(sources[:32], translator.request(decode=dc))
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        results = translator.translate(sources, translator.request(decode=dc))
        times.append(time.perf_counter() - start)
    tokens = sum(len(r[0].tokens) + 1 for r in results)  # with <eos>
    return [r[0].text for r in results], statistics.median(times), tokens


def engines(path: str, wanted: list[str], folder: Path, overrides: list[str]):
    """(engine name, translator, model bytes) for each wanted engine this checkpoint has."""
    for name in wanted:
        if name == "pytorch":
            translator = load_engine(path, "auto")
            yield name, translator, weights_bytes(translator.model)
        elif name == "pytorch-int8":
            translator = load_engine(path, "cpu", "int8")
            yield name, translator, weights_bytes(translator.model)
        else:
            from translator.engines.export import export_checkpoint

            scheme = name.split("-")[1]
            shortlist = name.endswith("-vmap")
            probe = load_engine(path, "cpu")
            if "ctranslate2" not in probe.model.export_formats:
                print(
                    f"{path}: {probe.cfg.model.type} does not export; no {name} rows",
                    file=sys.stderr,
                )
                continue
            out = export_checkpoint(
                Path(path), "ctranslate2", scheme, folder / name, shortlist, overrides
            )[1]
            yield name, load_engine(out), (out / "model.bin").stat().st_size


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--checkpoint", action="append", required=True)
    ap.add_argument("--set", action="append", default=[], dest="overrides")
    ap.add_argument("--split", default="test", choices=["dev", "test"])
    ap.add_argument("--beam", action="append", type=int, help="beam sizes (default 1 and 5)")
    ap.add_argument("--engine", action="append", choices=ENGINES, help="default: all")
    ap.add_argument("--batch-size", type=int, default=64)
    ap.add_argument("--limit", type=int, default=0, help="first N sentences only")
    ap.add_argument("--threads", type=int, default=0)
    ap.add_argument("--repeat", type=int, default=1, help="timed runs per row (the median)")
    args = ap.parse_args()
    set_threads(args.threads)
    for path in args.checkpoint:
        with tempfile.TemporaryDirectory(prefix="bench-export-") as folder:
            bench_checkpoint(path, args, Path(folder))


def bench_checkpoint(path: str, args, folder: Path) -> None:
    reference: dict[int, list[str]] = {}  # beam -> the float32 PyTorch output
    wanted = args.engine or list(ENGINES)
    for engine, translator, size in engines(path, wanted, folder, args.overrides):
        cfg = config_from_dict(translator.cfg.to_dict(), path, args.overrides)
        pairs = load_split(cfg.data, args.split, cfg.seed)
        if args.limit:
            pairs = pairs[: args.limit]
        sources, refs = [s for s, _ in pairs], [t for _, t in pairs]
        model = translator.model if engine.startswith("pytorch") else None
        caches = [True, False] if engine == "pytorch" and model.uncached_step else [True]
        for beam in args.beam or [1, 5]:
            dc = cfg.decode.replace(beam=beam, batch_size=args.batch_size)
            outputs = {}
            for cache in caches:
                if model is not None:
                    model.use_cache = cache
                hyps, seconds, tokens = timed(translator, sources, dc, args.repeat)
                outputs[cache] = (hyps, seconds)
                row = {
                    "checkpoint": path,
                    "family": cfg.model.type,
                    "engine": engine,
                    "beam": beam,
                    "cache": cache,
                    "batch_size": args.batch_size,
                    "sentences": len(sources),
                    "sentences_per_s": round(len(sources) / seconds, 1),
                    "target_tokens_per_s": round(tokens / seconds),
                    "seconds": round(seconds, 2),
                    "repeat": args.repeat,
                    "bleu": round(bleu(hyps, refs), 2),
                    "model_bytes": size,
                    "device": where(model),
                    "date": datetime.date.today().isoformat(),
                }
                if not cache:
                    row["cache_speedup"] = round(seconds / outputs[True][1], 2)
                    row["identical_to_cached"] = hyps == outputs[True][0]
                if engine == "pytorch":
                    reference.setdefault(beam, hyps)
                elif beam in reference:
                    same = sum(a == b for a, b in zip(hyps, reference[beam]))
                    row["identical_to_pytorch"] = round(same / len(hyps), 4)
                print(json.dumps(row), flush=True)
            if model is not None:
                model.use_cache = True


def where(model) -> str:
    """What decoded: the card's name ("NVIDIA H200") or "cpu" (CTranslate2 runs on the CPU)."""
    device = next(model.parameters()).device if model is not None else None
    return torch.cuda.get_device_name(device) if device and device.type == "cuda" else "cpu"


if __name__ == "__main__":
    main()
