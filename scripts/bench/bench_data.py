"""Data-path benchmark: preparing and training on corpora of growing size.

    python scripts/bench/bench_data.py --data ../shared/data/multi30k

For each size it makes a corpus under --work (Multi30k's training pairs repeated, the
k-th copy of a sentence ending in " k" on both sides, so that no two pairs are equal;
val and test are Multi30k's), then prints one JSON line with:
- `translator prepare`: seconds, pairs/s, the tokenizer's share of the seconds, and the
  peak resident memory of the preparing process (and of it with its worker processes);
- training on the prepared data, in a fresh process: start-up seconds (process start to
  the first step), steady target tokens/s over --steps steps after --warmup untimed ones,
  peak resident memory, and its anonymous part (a memory map of the data is file-backed);
- under torchrun with 2 processes (--torchrun-size), the same for each process.
Last, a --flat-steps run of the Multi30k Transformer on Multi30k itself reports the
resident memory at step 200 and at the last step, the peak, and the dev BLEU of each
validation (`--sizes --torchrun-sizes` with no sizes: that run alone). Nothing else
should run on the machine meanwhile. The corpora are never
committed; delete --work afterwards.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _lines(path: Path) -> list[str]:
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as f:
        return f.read().split("\n")[:-1]


def make_corpus(data: Path, size: int, out: Path) -> Path:
    done = out / ".complete"
    if done.is_file():
        return out
    out.mkdir(parents=True, exist_ok=True)
    for lang in ("de", "en"):
        base = _lines(next(data.glob(f"train.{lang}*")))
        with open(out / f"train.{lang}", "w", encoding="utf-8") as f:
            for k in range(size):
                copy, i = divmod(k, len(base))
                f.write(f"{base[i]} {copy}\n" if copy else base[i] + "\n")
        for split in ("val", "test_2016_flickr"):
            target = out / f"{split}.{lang}.gz"
            if not target.exists():
                os.symlink(next(data.glob(f"{split}.{lang}*")).resolve(), target)
    done.touch()
    return out


def _tree_rss_kb(pid: int) -> int:
    """Resident KiB of a process and all its descendants."""
    children: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rpartition(")")[2].split()
            children.setdefault(int(fields[1]), []).append(int(stat.parent.name))
        except (OSError, ValueError):
            continue
    total, todo = 0, [pid]
    while todo:
        p = todo.pop()
        todo += children.get(p, [])
        try:
            for line in open(f"/proc/{p}/status"):
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1])
        except OSError:
            pass
    return total


def run(cmd: list[str], env: dict | None = None) -> tuple[float, int, int, str]:
    """Wall seconds, the process's own peak RSS (KiB), the peak of its whole process
    tree (sampled), and its stdout."""
    start = time.perf_counter()
    proc = subprocess.Popen(
        cmd, stdout=subprocess.PIPE, text=True, env={**os.environ, **(env or {})}
    )
    peak_tree, done = [0], threading.Event()

    def sample():  # never waits for the child: wait4 below must be the one that reaps it
        while not done.wait(0.2):
            peak_tree[0] = max(peak_tree[0], _tree_rss_kb(proc.pid))

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    out = proc.stdout.read()
    _, status, usage = os.wait4(proc.pid, 0)
    seconds = time.perf_counter() - start
    done.set()
    sampler.join()
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode:
        sys.exit(f"failed ({proc.returncode}): {' '.join(cmd)}")
    return seconds, usage.ru_maxrss, peak_tree[0], out


def mb(kb: int) -> int:
    return round(kb / 1024)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--config", default=str(ROOT / "configs/multi30k_transformer.yaml"))
    ap.add_argument("--data", default=str(ROOT / "../shared/data/multi30k"))
    ap.add_argument(
        "--sizes", type=int, nargs="*", default=[100_000, 1_000_000, 10_000_000],
        help="corpus sizes to prepare and train on (none: only the Multi30k run)",
    )  # fmt: skip
    ap.add_argument("--torchrun-sizes", type=int, nargs="*", default=[100_000, 1_000_000])
    ap.add_argument("--steps", type=int, default=30)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--flat-steps", type=int, default=2000, help="0: no Multi30k run")
    ap.add_argument("--work", default=os.path.join(tempfile.gettempdir(), "translator-bench-data"))
    args = ap.parse_args()
    work, data = Path(args.work), Path(args.data)
    py = [sys.executable]
    env = {"TRANSLATOR_CACHE": str(work / "cache"), "PYTHONUNBUFFERED": "1"}
    for size in sorted(set(args.sizes) | set(args.torchrun_sizes)):
        corpus = make_corpus(data, size, work / f"corpus-{size}")
        sets = [
            "--set", f"data.dir={corpus}", "--set", f"data.prepared_dir={work / f'prepared-{size}'}",
            "--set", f"run_dir={work / f'run-{size}'}",
        ]  # fmt: skip
        line: dict = {"pairs": size}
        seconds, own, tree, _ = run(
            [*py, "-m", "translator", "prepare", "--config", args.config, *sets], env
        )
        manifest = json.loads((work / f"prepared-{size}" / "manifest.json").read_text())
        line["prepare"] = {
            "seconds": round(seconds, 1),
            "pairs_per_s": round(size / seconds),
            "tokenizer_seconds": manifest["tokenizer_seconds"],
            "pairs_per_s_after_tokenizer": round(size / (seconds - manifest["tokenizer_seconds"])),
            "peak_rss_mb": mb(own),
            "peak_rss_mb_with_workers": mb(tree),
        }
        bench = [str(ROOT / "scripts/bench/bench_train.py"), "--config", args.config, *sets,
                 "--steps", str(args.steps), "--warmup", str(args.warmup)]  # fmt: skip
        if size in args.sizes:
            _, _, _, out = run([*py, *bench], env)
            line["train"] = _train_fields(json.loads(out.strip().splitlines()[-1]))
        if size in args.torchrun_sizes:
            launcher = [*py, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node=2"]
            _, _, _, out = run([*launcher, *bench], {**env, "OMP_NUM_THREADS": "1"})
            ranks = [json.loads(x) for x in out.strip().splitlines() if x.startswith("{")]
            line["torchrun_2_processes"] = [_train_fields(r) for r in ranks]
        print(json.dumps(line), flush=True)
    if args.flat_steps:
        print(json.dumps(flat_run(args, work, env)), flush=True)


def _train_fields(r: dict) -> dict:
    keep = ("startup_seconds", "target_tokens_per_s", "peak_memory_mb", "rss_mb", "anon_mb")
    return {k: r[k] for k in keep if k in r}


def flat_run(args, work: Path, env: dict) -> dict:
    """The Multi30k Transformer on Multi30k: is the memory flat over a long run?"""
    run_dir = work / "multi30k-flat"
    cmd = [
        sys.executable, "-m", "translator", "train", "--config", args.config,
        "--set", f"data.dir={args.data}", "--set", f"run_dir={run_dir}",
        "--set", f"train.max_steps={args.flat_steps}", "--set", "train.max_minutes=null",
        "--set", "train.patience=0",
    ]  # fmt: skip
    run(cmd, env)
    return flat_summary(run_dir)


def flat_summary(run_dir: Path) -> dict:
    summary = json.loads((run_dir / "summary.json").read_text())
    memory = {step: (rss, anon) for step, rss, anon in summary["memory"]}
    last = max(memory)
    return {
        "run": "multi30k_transformer",
        "steps": summary["steps"],
        "minutes": summary["wall_minutes"],
        "rss_mb_at_step_200": memory[200][0],
        f"rss_mb_at_step_{last}": memory[last][0],
        "growth_200_to_last": round(memory[last][0] / memory[200][0] - 1, 4),
        "anon_mb_at_step_200": memory[200][1],
        f"anon_mb_at_step_{last}": memory[last][1],
        "peak_rss_mb": summary["peak_rss_mb"],
        "target_tokens_per_s": summary["target_tokens_per_second"],
        "dev_bleu": {v["step"]: round(v["dev_bleu"], 2) for v in summary["validations"]},
    }


if __name__ == "__main__":
    main()
