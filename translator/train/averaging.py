"""Checkpoint averaging: `translator average` writes the elementwise mean of several
checkpoints' weights, by default of the step-numbered checkpoints a run keeps
(`train.keep_checkpoints`).

Averaging the last few checkpoints of a run smooths out the noise of the last updates, much
as the moving average of translator.train.ema does during training. Only checkpoints of the same
model can be averaged: the same `model` section, the same `tokenizer` keys, the same
sentencepiece model bytes and the same language pairs and corpus tags; anything else is
refused, naming the two files that differ.
"""

from __future__ import annotations

import logging
from pathlib import Path

import torch

from translator.errors import UserError
from translator.models.checkpoint import Checkpoint, check_replaceable
from translator.progress import progress_bar
from translator.train.run_dir import RunDir

log = logging.getLogger(__name__)


def _same_model(first: Checkpoint, first_path: Path, other: Checkpoint, path: Path) -> None:
    from translator.config.diff import config_changes, describe_changes

    def keys(ckpt: Checkpoint) -> dict:
        config = ckpt.config if isinstance(ckpt.config, dict) else {}
        return {"model": config.get("model"), "tokenizer": config.get("tokenizer")}

    changes = config_changes(keys(first), keys(other))
    if changes:
        raise UserError(
            f"cannot average {first_path} and {path}: their configs differ in {describe_changes(changes)}",
            "average checkpoints of one run (or of runs with the same model and tokenizer)",
        )
    tasks = [_directions(ckpt, where) for ckpt, where in ((first, first_path), (other, path))]
    if tasks[0] != tasks[1]:
        raise UserError(
            f"cannot average {first_path} and {path}: they translate {' and '.join(tasks)}",
            "average checkpoints of one run (or of runs with the same languages and tags)",
        )
    mine, theirs = first.tokenizer, other.tokenizer
    if (mine["src"], mine.get("tgt")) != (theirs["src"], theirs.get("tgt")):
        raise UserError(
            f"cannot average {first_path} and {path}: their sentencepiece models differ",
            "average checkpoints of one run (or of runs with the same tokenizer)",
        )
    if {k: v.shape for k, v in first.model.items()} != {k: v.shape for k, v in other.model.items()}:
        raise UserError(f"cannot average {first_path} and {path}: their weights differ in shape")


def _directions(ckpt: Checkpoint, where: Path) -> str:
    """What a checkpoint translates: its language pairs and corpus tags, in words."""
    from translator.config import config_from_dict
    from translator.config.languages import directions, spelled

    data = config_from_dict(ckpt.config, f"{where} (saved config)").data
    tags = f" (tags {', '.join(data.tags)})" if data.tags else ""
    return f"{spelled(sorted(directions(data)))}{tags}"


def average_checkpoints(paths: list[Path]) -> Checkpoint:
    """A checkpoint (config, tokenizer and source record of the last file, no training
    state) whose weights are the elementwise mean of the files' weights, summed in float32
    and stored in their own dtype; integer tensors (counters, not weights) are the last
    file's. One file is held in memory at a time beside the running sum."""
    if not paths:
        raise UserError("nothing to average: give at least one checkpoint")
    first = first_path = total = last = None
    steps = []  # each file's training step, for `info` (None where it records none)
    for path in progress_bar(paths, desc="average", unit="checkpoint", enabled=len(paths) > 1):
        last = Checkpoint.load(path)
        last.build_tokenizer(str(path))  # a tokenizer that fits its fingerprint
        steps.append(last.progress.get("step") if isinstance(last.progress, dict) else None)
        if not isinstance(last.model, dict):
            raise UserError(f"{path}: not a translator model checkpoint (it has no weights)")
        if first is None:
            first, first_path = last, path
            total = {k: torch.zeros_like(v, dtype=torch.float32) for k, v in last.model.items()}
        else:
            _same_model(first, first_path, last, path)
        for name, tensor in last.model.items():
            if tensor.is_floating_point():
                total[name] += tensor.float()
    weights = {
        name: (total[name] / len(paths)).to(t.dtype) if t.is_floating_point() else t
        for name, t in last.model.items()
    }
    # an imported model's origin, card and licence hold for the average of its fine-tunings
    return Checkpoint(
        config=last.config, tokenizer=last.tokenizer, model=weights, source=last.source,
        progress={"averaged_steps": steps},
    )  # fmt: skip


def average_command(
    run_dir: Path | None, last: int | None, checkpoints: list[Path], output: Path | None
) -> str:
    """`translator average`: pick the files, average them, write the result; a line to print."""
    if run_dir is not None and checkpoints:
        raise UserError("give a run folder or --checkpoint files, not both")
    if run_dir is None and not checkpoints:
        raise UserError("give a run folder (its step-*.pt checkpoints) or --checkpoint files")
    if run_dir is not None:
        if not run_dir.is_dir():
            raise UserError(f"run folder not found: {run_dir}")
        run = RunDir(run_dir)
        checkpoints = run.step_checkpoints()
        if not checkpoints:
            raise UserError(
                f"{run_dir} holds no step-*.pt checkpoints",
                "train with train.keep_checkpoints set to how many to keep",
            )
        if last is not None and last > len(checkpoints):
            raise UserError(f"--last {last}: {run_dir} holds {len(checkpoints)} step checkpoints")
        checkpoints = checkpoints[-last:] if last else checkpoints
        output = output or run.average
    elif last is not None:
        raise UserError("--last picks from a run folder's step checkpoints; give the folder")
    elif output is None:
        raise UserError("--output F.pt: where to write the average of the --checkpoint files")
    from translator.fileio.outputs import distinct_outputs

    distinct_outputs({"--output": output}, {f"--checkpoint {p}": p for p in checkpoints})
    check_replaceable(output, "--output", "average")  # an earlier average, or nothing
    averaged = average_checkpoints(checkpoints)
    averaged.save(output)
    return f"averaged {len(checkpoints)} checkpoint(s) into {output}: " + ", ".join(
        p.name for p in checkpoints
    )
