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
score products (about 2% at Multi30k lengths) are left out. On a GPU it measures the
card's bf16 peak in the same run (an 8192^3 bf16 matrix product, `peak_tflops`) and
gives the model FLOPs utilisation against it (`mfu`, a fraction), and against the
datasheet's dense bf16 figure where the card is known (`mfu_datasheet`). `--output`
appends the lines to a file as well (results/*.jsonl).
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import json
import logging
import sys
import tempfile
import time

import torch
from sweep import grid_points  # scripts/bench/sweep.py, beside this file

from translator.config import load_config
from translator.memory import memory_mb, process_seconds
from translator.models.transformer import Transformer
from translator.specials import PAD
from translator.train.trainer import Trainer


def peak_memory_mb(device) -> int:
    """Peak GPU memory allocated, or on the CPU the process's peak resident size."""
    if device.type == "cuda":
        return round(torch.cuda.max_memory_allocated(device) / 2**20)
    return memory_mb()["peak"]


# Dense bf16 tensor-core peaks, TFLOP/s (vendor datasheets, without sparsity).
PEAK_BF16_TFLOPS = {"H100 PCIe": 756.0, "H100": 989.0, "H200": 989.0, "A100": 312.0}


def datasheet_tflops(device) -> float | None:
    if device.type != "cuda":
        return None
    name = torch.cuda.get_device_name(device)
    return next((v for k, v in PEAK_BF16_TFLOPS.items() if k in name), None)


def measured_tflops(device, size: int = 8192, repeat: int = 10) -> float:
    """The card's bf16 matrix-product rate on random data: the mean of `repeat` timed
    size^3 products after three warm-ups, timed with CUDA events."""
    a = torch.randn(size, size, device=device, dtype=torch.bfloat16)
    b = torch.randn(size, size, device=device, dtype=torch.bfloat16)
    for _ in range(3):
        a @ b
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(repeat):
        a @ b
    end.record()
    end.synchronize()
    seconds = start.elapsed_time(end) / 1000 / repeat
    return 2 * size**3 / seconds / 1e12


def graphs_compiled() -> int:
    from torch._dynamo.utils import counters

    return counters["stats"]["unique_graphs"]


def warm_up(trainer, steps: int, settle: int) -> int:
    """Untimed steps: `steps`, then more until `settle` in a row compiled nothing."""
    done, quiet = 0, 0
    while done < steps or (quiet < settle and done < steps + 100):
        before = graphs_compiled()
        trainer.train_step()
        trainer.sync()  # (a step's compiling happens on the host, before its kernels)
        quiet = quiet + 1 if graphs_compiled() == before else 0
        done += 1
    return done


def sync(device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--config", required=True)
    ap.add_argument("--set", action="append", default=[], dest="overrides")
    ap.add_argument("--steps", type=int, default=30)
    ap.add_argument("--warmup", type=int, default=3, help="untimed steps first")
    ap.add_argument(
        "--settle", type=int, default=0, metavar="N",
        help="after --warmup, keep warming up until N steps in a row compile nothing (at "
        "most 100 more): a compiled model recompiles when a batch crosses a size it guards",
    )  # fmt: skip
    ap.add_argument("--dtype", action="append", help="fp32, bf16, ... (repeatable)")
    ap.add_argument("--batch-tokens", action="append", type=int, help="(repeatable)")
    ap.add_argument(
        "--compile", action="append", choices=["false", "true", "whole"],
        help="true: as train.compile does it (a model's layers one by one where it names "
        "them); whole: the whole model in one graph, for comparison (repeatable)",
    )  # fmt: skip
    ap.add_argument("--peak-tflops", type=float, help="the bf16 peak for MFU (default: measured)")
    ap.add_argument("--output", help="also append the JSON lines to this file")
    ap.add_argument(
        "--cudnn-attention", action="store_true",
        help="let attention take cuDNN's kernel, which translator switches off (for comparison)",
    )  # fmt: skip
    ap.add_argument(
        "--profile", type=int, default=0, metavar="N",
        help="after the timed steps, profile N more and print the kernels by time (stderr)",
    )  # fmt: skip
    ap.add_argument(
        "--vary", action="append", default=[], metavar="KEY=V1,V2",
        help="any config key, each value measured in turn (repeatable, as sweep.py --grid)",
    )  # fmt: skip
    args = ap.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s", stream=sys.stderr)
    if args.cudnn_attention:
        torch.backends.cuda.enable_cudnn_sdp(True)
    for dtype in args.dtype or ["auto"]:
        for bt in args.batch_tokens or [None]:
            for compiled in args.compile or ["false"]:
                for varied in grid_points(args.vary):
                    extra = [f"train.dtype={dtype}", f"run_dir={tempfile.mkdtemp()}"]
                    extra.append(f"train.compile={compiled != 'false'}")
                    if bt:
                        extra.append(f"train.batch_tokens={bt}")
                    extra += [f"{k}={v}" for k, v in varied.items()]
                    cfg = load_config(args.config, args.overrides + extra)
                    with whole_model(compiled == "whole"):
                        line = json.dumps({**varied, **measure(cfg, args)})
                    print(line, flush=True)
                    if args.output:
                        with open(args.output, "a", encoding="utf-8") as f:
                            f.write(line + "\n")


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
    warm = time.perf_counter()
    warmed = warm_up(trainer, args.warmup, args.settle)
    sync(trainer.device)
    warmup = time.perf_counter() - warm  # compiling included
    discarded = 0
    while True:  # a window in which something compiled is timed again, twice at most
        batches.clear()
        start = time.perf_counter()
        compiled_before = graphs_compiled()
        for _ in range(args.steps):
            trainer.train_step()
        stats = trainer.sync()
        sync(trainer.device)
        seconds = time.perf_counter() - start
        compiled_while_timed = graphs_compiled() - compiled_before
        if not compiled_while_timed or discarded == 2:
            break
        discarded += 1
    tgt = sum(b.n_tokens for b in batches)
    src = sum(int((b.src != PAD).sum()) for b in batches)
    out = {
        "date": datetime.date.today().isoformat(),
        "family": cfg.model.type,
        "device": device_name(trainer.device),
        "d_model": getattr(cfg.model, "d_model", None),  # the recurrent families have none
        "layers": [getattr(cfg.model, k, None) for k in ("enc_layers", "dec_layers")],
        "vocabulary": trainer.tokenizer.tgt_vocab_size,
        "dtype": str(trainer.dtype).split(".")[-1],
        # false, or what was compiled: the model's layers one by one, or the whole model
        "compile": cfg.train.compile and ("regions" if trainer.model.compile_regions else "whole"),
        "cudnn_attention": torch.backends.cuda.cudnn_sdp_enabled(),
        "batch_tokens": cfg.train.batch_tokens,
        "parameters": trainer.model.num_parameters(),
        "target_tokens_per_s": round(tgt / seconds),
        "target_tokens_per_step": round(tgt / args.steps),
        "seconds_per_step": round(seconds / args.steps, 3),
        "padding_share": round(
            trainer.data.batches.plan_padding_share(trainer.data.batches.plan(0)), 3
        ),
        "peak_memory_mb": peak_memory_mb(trainer.device),
        "startup_seconds": round(startup, 2),
        "warmup_seconds": round(warmup, 2),
        "warmup_steps": warmed,
        "windows_discarded": discarded,  # timed windows in which a graph was compiled
        "graphs_compiled_while_timed": compiled_while_timed,  # 0 unless the timing is spoilt
        **{f"{k}_mb": v for k, v in memory_mb().items() if k != "peak"},
        "rank": trainer.group.rank,
        "skipped_steps": stats.skipped,
    }
    if args.profile:
        profile(trainer, args.profile)
    trainer.close(finished=True)
    per_token = trainer.model.flops_per_token()
    if per_token:
        achieved = (per_token[0] * src + per_token[1] * tgt) / seconds / 1e12
        out["model_tflops_per_s"] = round(achieved, 3)
        peak = args.peak_tflops
        if peak is None and trainer.device.type == "cuda":
            peak = measured_tflops(trainer.device)
        if peak:
            out["peak_tflops"] = round(peak, 1)
            out["mfu"] = round(achieved / peak, 4)
        sheet = datasheet_tflops(trainer.device)
        if sheet:
            out["datasheet_tflops"] = sheet
            out["mfu_datasheet"] = round(achieved / sheet, 4)
    return out


@contextlib.contextmanager
def whole_model(whole: bool):
    """The Transformer compiled as one graph instead of layer by layer, while it is built."""
    saved = Transformer.compile_regions
    Transformer.compile_regions = () if whole else saved
    try:
        yield
    finally:
        Transformer.compile_regions = saved


def profile(trainer, steps: int) -> None:
    """The operators and kernels of `steps` training steps, the most time first."""
    from torch.profiler import ProfilerActivity
    from torch.profiler import profile as profiler

    cuda = trainer.device.type == "cuda"
    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if cuda else [])
    with profiler(activities=activities) as prof:
        for _ in range(steps):
            trainer.train_step()
        trainer.sync()
        sync(trainer.device)
    key = "self_cuda_time_total" if cuda else "self_cpu_time_total"
    print(prof.key_averages().table(sort_by=key, row_limit=30, max_name_column_width=60),
          file=sys.stderr)  # fmt: skip


def device_name(device) -> str:
    """The card's name on a GPU ("NVIDIA H200"), else the device type."""
    return torch.cuda.get_device_name(device) if device.type == "cuda" else str(device)


if __name__ == "__main__":
    main()
