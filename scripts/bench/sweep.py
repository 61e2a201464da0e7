"""A recipe search on the dev set: every combination of the given settings trains under
the same budget, and the runs are ranked by their best dev BLEU. The test set is never
scored here, so nothing it holds can steer a choice.

    python scripts/bench/sweep.py --config configs/multi30k_transformer.yaml \\
        --set data.dir=../shared/data/multi30k --minutes 5 \\
        --grid train.lr_schedule=inverse_sqrt,linear --grid train.lr=0.001,0.002

Each run is its own `translator train` process (run folders under --runs, named after
their settings); one JSON line per run goes to --out, and a table of the combinations,
best first, to the terminal. A run whose summary.json already exists is read, not
trained again, so an interrupted sweep continues where it stopped. A budget in steps
(--steps) makes the ranking independent of the machine's load; a budget in minutes is
what a user's run gets, and needs an otherwise idle machine. With a step budget, --jobs N
trains N runs side by side, each on cores/N threads (unless train.threads is set), its
output in RUNS/NAME.log.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor, as_completed
from pathlib import Path
from statistics import mean


def grid_points(grids: list[str]) -> list[dict[str, str]]:
    """["a=1,2", "b=x"] -> [{"a": "1", "b": "x"}, {"a": "2", "b": "x"}]."""
    axes = []
    for grid in grids:
        key, sep, values = grid.partition("=")
        if not sep or not values:
            raise SystemExit(f"--grid {grid!r}: expected KEY=V1,V2,...")
        axes.append([(key.strip(), v.strip()) for v in values.split(",")])
    return [dict(point) for point in itertools.product(*axes)]


def run_name(point: dict[str, str], seed: int) -> str:
    parts = [f"{k.split('.')[-1]}={v}" for k, v in point.items()] + [f"seed={seed}"]
    return re.sub(r"[^A-Za-z0-9_.=-]+", "_", ",".join(parts))


def train(args, point: dict[str, str], seed: int) -> dict:
    run_dir = Path(args.runs) / run_name(point, seed)
    summary = run_dir / "summary.json"
    if not summary.exists():
        budget = (
            ["train.max_minutes=null", f"train.max_steps={args.steps}"]
            if args.steps
            else [f"train.max_minutes={args.minutes}"]
        )
        sets = [*args.set, *budget, f"seed={seed}", f"run_dir={run_dir}"]
        sets += [f"{k}={v}" for k, v in point.items()]
        if args.jobs > 1 and not any(s.startswith("train.threads=") for s in sets):
            sets.append(f"train.threads={max(1, (os.cpu_count() or 1) // args.jobs)}")
        # --overwrite: a run without its summary was cut off; it starts again
        command = [sys.executable, "-m", "translator", "train", "--overwrite"]
        command += ["--config", args.config]
        for s in sets:
            command += ["--set", s]
        sys.stdout.write("$ " + " ".join(command[1:]) + "\n")  # one write: runs side by side
        sys.stdout.flush()
        if args.jobs > 1:
            log = Path(args.runs) / f"{run_dir.name}.log"
            log.parent.mkdir(parents=True, exist_ok=True)
            with open(log, "w") as out:
                failed = subprocess.run(command, stdout=out, stderr=subprocess.STDOUT).returncode
            where = f"see {log}"
        else:
            failed = subprocess.run(command).returncode
            where = "see its output above"
        if failed:
            raise SystemExit(f"{run_dir}: training failed; {where}")
    result = json.loads(summary.read_text())
    return {
        "settings": point,
        "seed": seed,
        "run_dir": str(run_dir),
        "dev_bleu": result["best_dev_bleu"],
        "best_step": result["best_step"],
        "steps": result["steps"],
        "target_tokens_per_second": result["target_tokens_per_second"],
    }


def table(rows: list[dict]) -> str:
    """One line per combination, its mean dev BLEU over seeds, best first."""
    groups: dict[str, list[dict]] = {}
    for row in rows:
        groups.setdefault(json.dumps(row["settings"], sort_keys=True), []).append(row)
    ranked = sorted(groups.values(), key=lambda g: -mean(r["dev_bleu"] for r in g))
    lines = ["| settings | dev BLEU (per seed) | mean | steps |", "| --- | --- | ---: | ---: |"]
    for group in ranked:
        settings = ", ".join(f"{k}={v}" for k, v in group[0]["settings"].items()) or "(config)"
        scores = " / ".join(f"{r['dev_bleu']:.2f}" for r in group)
        steps = round(mean(r["steps"] for r in group))
        lines.append(
            f"| {settings} | {scores} | {mean(r['dev_bleu'] for r in group):.2f} | {steps} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--config", required=True)
    ap.add_argument("--set", action="append", default=[], help="KEY=VALUE for every run")
    ap.add_argument("--grid", action="append", default=[], help="KEY=V1,V2,... to search")
    ap.add_argument("--seeds", default="1", help="comma-separated seeds per combination")
    budget = ap.add_mutually_exclusive_group(required=True)
    budget.add_argument("--minutes", type=float, help="wall-clock budget per run")
    budget.add_argument("--steps", type=int, help="optimizer steps per run")
    ap.add_argument("--jobs", type=int, default=1, help="runs side by side (needs --steps)")
    ap.add_argument("--runs", default="runs/sweep", help="folder of the run folders")
    ap.add_argument("--out", default="results/sweep.jsonl", help="JSON lines appended here")
    args = ap.parse_args(argv)

    if args.jobs < 1:
        ap.error("--jobs: at least 1")
    if args.jobs > 1 and not args.steps:
        ap.error("--jobs above 1 needs --steps: side-by-side runs share the machine's minutes")
    seeds = [int(s) for s in args.seeds.split(",")]
    rows = []
    with ThreadPoolExecutor(max_workers=args.jobs) as pool:
        runs = [
            pool.submit(train, args, point, seed)
            for point in grid_points(args.grid)
            for seed in seeds
        ]
        for done in as_completed(runs):
            row = done.result()
            rows.append(row)
            Path(args.out).parent.mkdir(parents=True, exist_ok=True)
            with open(args.out, "a") as f:
                f.write(json.dumps({"config": args.config, "sets": args.set, **row}) + "\n")
    print(table(rows))


if __name__ == "__main__":
    main()
