"""Training throughput: a fixed number of steps per setting, one JSON line per run.

    python scripts/bench_train.py --config configs/multi30k_transformer.yaml \
        --set data.dir=../shared/data/multi30k --steps 30 --dtype fp32 --dtype bf16

Each configuration trains in its own Trainer; the peak memory is the process's
peak so far (CPU) or the peak allocated on the GPU.

Settings are measured one after another in the same process, so their ratio is
meaningful even on a busy machine; absolute figures vary with the machine's load.
"""

from __future__ import annotations

import argparse
import json
import resource
import tempfile
import time

from translator.config import load_config
from translator.train import Trainer


def peak_memory_mb(device) -> int:
    """Peak GPU memory allocated, or on the CPU the process's peak resident size."""
    import torch

    if device.type == "cuda":
        return round(torch.cuda.max_memory_allocated(device) / 2**20)
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)  # KiB on Linux


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--config", required=True)
    ap.add_argument("--set", action="append", default=[], dest="overrides")
    ap.add_argument("--steps", type=int, default=30)
    ap.add_argument("--warmup", type=int, default=3, help="untimed steps first")
    ap.add_argument("--dtype", action="append", help="fp32, bf16, ... (repeatable)")
    ap.add_argument("--batch-tokens", action="append", type=int, help="(repeatable)")
    args = ap.parse_args()
    for dtype in args.dtype or ["auto"]:
        for bt in args.batch_tokens or [None]:
            extra = [f"train.dtype={dtype}", f"run_dir={tempfile.mkdtemp()}"]
            if bt:
                extra.append(f"train.batch_tokens={bt}")
            cfg = load_config(args.config, args.overrides + extra)
            trainer = Trainer(cfg)
            trainer.bad_in_a_row = 0
            for _ in range(args.warmup):
                trainer.train_step()
            tokens, start = 0, time.perf_counter()
            for _ in range(args.steps):
                tokens += trainer.train_step()[1]
            seconds = time.perf_counter() - start
            epoch = trainer.batches.epoch(0)
            print(
                json.dumps(
                    {
                        "family": cfg.model.type,
                        "device": str(trainer.device),
                        "dtype": str(trainer.dtype).split(".")[-1],
                        "batch_tokens": cfg.train.batch_tokens,
                        "parameters": trainer.model.num_parameters(),
                        "target_tokens_per_s": round(tokens / seconds),
                        "seconds_per_step": round(seconds / args.steps, 3),
                        "padding_share": round(trainer.batches.padding_share(epoch), 3),
                        "peak_memory_mb": peak_memory_mb(trainer.device),
                    }
                ),
                flush=True,
            )


if __name__ == "__main__":
    main()
