"""Folders translator wrote without its list of the files it wrote there (outputs.MARKER),
recognised by what they hold: a run's checkpoints, a distilled corpus's record, an
export's or a prepared folder's manifest. `--resume`, `--overwrite` and `export` adopt
such a folder as translator's own, and no command's output file replaces a file of it."""

from __future__ import annotations

import json
import re
from pathlib import Path

STEP_NAME = re.compile(r"step-(\d+)\.pt")
# what a run writes in its folder (besides its step checkpoints)
RUN_NAMES = (
    "last.pt", "best.pt", "average.pt", "config.yaml", "summary.json", "train.log",
    "validations.jsonl", "tensorboard",
)  # fmt: skip
# what distill writes in its folder: NAME.SRC, NAME.TGT, NAME.ref.TGT, NAME.json ...
DISTILLED = re.compile(r"\.?train\d*\..+")
MANIFEST = "manifest.json"


def earlier_run(folder: Path) -> set[str] | None:
    """A run folder written without the output marker (it holds a run's checkpoint, or
    nothing but a run's own names with its log and config, a run stopped before its first
    checkpoint): the names in it that a run writes; None for any other folder (a lone
    train.log may be anyone's)."""
    names = {p.name for p in folder.iterdir()}
    own = {n for n in names if n in RUN_NAMES or STEP_NAME.fullmatch(n)}
    if names & {"last.pt", "best.pt"} or (own == names and {"train.log", "config.yaml"} <= names):
        return own
    return None


def earlier_distill(folder: Path) -> set[str] | None:
    """A folder distill wrote without the output marker (nothing but its files, with the
    record of each corpus it distilled): its names; None for any other folder."""
    names = {p.name for p in folder.iterdir()}
    ours = all(DISTILLED.fullmatch(n) for n in names)
    return names if ours and any(re.fullmatch(r"train\d*\.json", n) for n in names) else None


def manifest_listed(folder: Path) -> tuple[dict, set[str]] | None:
    """(the manifest, the names it lists with its own) of a folder whose manifest.json
    lists its files, as an export's and a prepared folder's do; None for any other."""
    try:
        manifest = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError, UnicodeDecodeError):
        return None
    if not isinstance(manifest, dict) or "format" not in manifest:
        return None
    files = manifest.get("files")
    if not isinstance(files, (list, dict)):
        return None
    return manifest, {n for n in files if isinstance(n, str)} | {MANIFEST}


def recognised(folder: Path) -> set[str] | None:
    """The names translator wrote in `folder`, a folder of one of the kinds above; None
    for any other."""
    if not folder.is_dir():
        return None
    if (listed := manifest_listed(folder)) is not None:
        return listed[1]
    try:
        return earlier_run(folder) or earlier_distill(folder)
    except OSError:
        return None
