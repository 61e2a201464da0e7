"""`translator curves`: training runs side by side, from their summary.json files (a run
still training, or killed, from its validations.jsonl, without training losses).

Dev BLEU is drawn against wall-clock minutes (what a time budget buys) and the training
loss against steps. A validation entry that records its `minutes` (wall clock since the
start, validation included) is drawn there; summaries without it get an estimate from
what they do record: its step at the run's mean training rate (`train_minutes / steps`)
plus the time of the validations up to and including it (their `seconds`).
"""

from __future__ import annotations

import json
from pathlib import Path

from translator.errors import UserError


def read_summary(path: Path, file: Path) -> tuple[str, dict]:
    """(a name for the legend, the summary) of `path`, a run folder or a summary.json file;
    `file`: the summary file it stands for (the run folder knows its name)."""
    record = path / "validations.jsonl"
    if not file.is_file() and path.is_dir() and record.is_file():
        file, summary = record, {"validations": _record(record)}  # a running or killed run
    elif not file.is_file():
        raise UserError(f"{path}: no training summary (give a run folder or its summary.json)")
    else:
        try:
            summary = json.loads(file.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as err:
            raise UserError(f"{file}: not a readable summary.json ({err})") from None
    valid = isinstance(summary, dict) and isinstance(summary.get("validations"), list)
    if not valid or not summary["validations"]:
        raise UserError(f"{file}: no validations in this summary (key 'validations')")
    try:
        rows = [(int(v["step"]), float(v["dev_bleu"])) for v in summary["validations"]]
    except (TypeError, KeyError, ValueError):
        raise UserError(f"{file}: a validation without 'step' and 'dev_bleu'") from None
    if not recorded_minutes(summary) and not (
        summary.get("steps") and summary.get("train_minutes") is not None
    ):
        raise UserError(f"{file}: no wall-clock time (keys 'steps' and 'train_minutes')")
    name = path.name if path.is_dir() else file.name.removesuffix(".json")
    return name.removesuffix(".summary"), {**summary, "bleu": rows}


def _record(path: Path) -> list:
    """The validations of a run's validations.jsonl, which a run that is still training (or
    was killed) keeps without a summary; a last line cut off by a kill is left out."""
    found = []
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        try:
            found.append(json.loads(line))
        except json.JSONDecodeError:
            continue
    return found


def validation_minutes(summary: dict) -> list[float]:
    """Wall-clock minutes at each validation: recorded, or estimated (see the module)."""
    validations = summary["validations"]
    if recorded_minutes(summary):
        return [float(v["minutes"]) for v in validations]
    per_step = float(summary["train_minutes"]) / int(summary["steps"])
    out, spent = [], 0.0
    for v in validations:
        spent += float(v.get("seconds", 0.0)) / 60
        out.append(int(v["step"]) * per_step + spent)
    return out


def recorded_minutes(summary: dict) -> bool:
    return all("minutes" in v for v in summary["validations"])


def draw_curves(runs: list[tuple[Path, Path]], plot: Path) -> str:
    """Draw the runs, each (a run folder or summary file, its summary file), to `plot`; what
    the picture shows, in one line."""
    from translator.fileio.outputs import distinct_outputs
    from translator.plots.figures import plot_curves

    distinct_outputs({"--plot": plot}, {f"RUN {file}": file for _, file in runs})
    summaries = [read_summary(path, file) for path, file in runs]
    series = [
        (
            name,
            validation_minutes(summary),
            [bleu for _, bleu in summary["bleu"]],
            [(s, loss) for s, loss in summary.get("losses") or [] if loss is not None],
        )
        for name, summary in summaries
    ]
    estimated = not all(recorded_minutes(summary) for _, summary in summaries)
    plot_curves(series, str(plot), estimated_minutes=estimated)
    without_loss = [name for name, _, _, losses in series if not losses]
    runs = f"{len(series)} run" + ("s" if len(series) != 1 else "")
    return f"curves of {runs} written to {plot}" + (
        f"; no training losses in {', '.join(without_loss)}" if without_loss else ""
    )
