"""Training throughput: a fixed number of steps per setting, one JSON line per run.

    python scripts/bench/bench_train.py --config configs/multi30k_transformer.yaml \
        --set data.dir=../shared/data/multi30k --steps 30 --dtype fp32 --dtype bf16
    python scripts/bench/bench_train.py ... --vary tokenizer.sampling_alpha=null,0.3

Each configuration trains in its own Trainer; the peak memory is the process's
peak so far (CPU) or the peak allocated on the GPU.

Settings are measured one after another in the same process, so their ratio is
meaningful even on a busy machine; absolute figures vary with the machine's load.

For the Transformer the line also gives the model FLOPs per second: 6 FLOPs per
weight per token (forward and backward), encoder weights for source tokens,
decoder and output weights for target tokens, real tokens only; the attention
score products (about 2% at Multi30k lengths) are left out. On a GPU whose bf16
peak is known (or given with --peak-tflops), it also gives the model FLOPs
utilisation (MFU) against that peak.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time

import torch
from sweep import grid_points  # scripts/bench/sweep.py, beside this file

from translator.config import load_config
from translator.memory import memory_mb, process_seconds
from translator.specials import PAD
from translator.train.trainer import Trainer


def peak_memory_mb(device) -> int:
    """Peak GPU memory allocated, or on the CPU the process's peak resident size."""
    if device.type == "cuda":
        return round(torch.cuda.max_memory_allocated(device) / 2**20)
    return memory_mb()["peak"]


# Dense bf16 tensor-core peaks, TFLOP/s (vendor datasheets, without sparsity).
PEAK_BF16_TFLOPS = {"H100 PCIe": 756.0, "H100": 989.0, "H200": 989.0, "A100": 312.0}


def peak_tflops(device, given: float | None) -> float | None:
    if given or device.type != "cuda":
        return given
    name = torch.cuda.get_device_name(device)
    return next((v for k, v in PEAK_BF16_TFLOPS.items() if k in name), None)


def sync(device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--config", required=True)
    ap.add_argument("--set", action="append", default=[], dest="overrides")
    ap.add_argument("--steps", type=int, default=30)
    ap.add_argument("--warmup", type=int, default=3, help="untimed steps first")
    ap.add_argument("--dtype", action="append", help="fp32, bf16, ... (repeatable)")
    ap.add_argument("--batch-tokens", action="append", type=int, help="(repeatable)")
    ap.add_argument("--compile", action="append", choices=["false", "true"], help="(repeatable)")
    ap.add_argument("--peak-tflops", type=float, help="the device's bf16 peak, for MFU")
    ap.add_argument(
        "--vary", action="append", default=[], metavar="KEY=V1,V2",
        help="any config key, each value measured in turn (repeatable, as sweep.py --grid)",
    )  # fmt: skip
    args = ap.parse_args()
    for dtype in args.dtype or ["auto"]:
        for bt in args.batch_tokens or [None]:
            for compiled in args.compile or ["false"]:
                for varied in grid_points(args.vary):
                    extra = [f"train.dtype={dtype}", f"run_dir={tempfile.mkdtemp()}"]
                    extra.append(f"train.compile={compiled}")
                    if bt:
                        extra.append(f"train.batch_tokens={bt}")
                    extra += [f"{k}={v}" for k, v in varied.items()]
                    cfg = load_config(args.config, args.overrides + extra)
                    print(json.dumps({**varied, **measure(cfg, args)}), flush=True)


def measure(cfg, args) -> dict:
    trainer = Trainer(cfg)
    startup = process_seconds()  # the command's start to the first step: reading the data
    batches = []
    take = trainer._next_batches

    def recording():  # count the source tokens of what is trained on
        out = take()
        batches.extend(out)
        return out

    trainer._next_batches = recording
    for _ in range(args.warmup):
        trainer.train_step()
    trainer.sync()
    sync(trainer.device)
    batches.clear()
    start = time.perf_counter()
    for _ in range(args.steps):
        trainer.train_step()
    stats = trainer.sync()
    sync(trainer.device)
    seconds = time.perf_counter() - start
    tgt = sum(b.n_tokens for b in batches)
    src = sum(int((b.src != PAD).sum()) for b in batches)
    out = {
        "family": cfg.model.type,
        "device": str(trainer.device),
        "dtype": str(trainer.dtype).split(".")[-1],
        "compile": cfg.train.compile,
        "batch_tokens": cfg.train.batch_tokens,
        "parameters": trainer.model.num_parameters(),
        "target_tokens_per_s": round(tgt / seconds),
        "seconds_per_step": round(seconds / args.steps, 3),
        "padding_share": round(
            trainer.data.batches.plan_padding_share(trainer.data.batches.plan(0)), 3
        ),
        "peak_memory_mb": peak_memory_mb(trainer.device),
        "startup_seconds": round(startup, 2),
        **{f"{k}_mb": v for k, v in memory_mb().items() if k != "peak"},
        "rank": trainer.group.rank,
        "skipped_steps": stats.skipped,
    }
    trainer.close(finished=True)
    per_token = trainer.model.flops_per_token()
    if per_token:
        achieved = (per_token[0] * src + per_token[1] * tgt) / seconds / 1e12
        out["model_tflops_per_s"] = round(achieved, 3)
        peak = peak_tflops(trainer.device, args.peak_tflops)
        if peak:
            out["mfu"] = round(achieved / peak, 4)
    return out


if __name__ == "__main__":
    main()
