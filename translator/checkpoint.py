"""Self-contained checkpoints, written atomically and loaded without running code.

A checkpoint holds the resolved config, the sentencepiece model bytes, the
weights and (for resuming) the training state. It is written atomically
(translator.fileio): a crash at any moment leaves either the old file or the
new one, never half of one.
Loading uses `torch.load(weights_only=True)`, which refuses pickled code.
"""

from __future__ import annotations

import io
import pickle
import re
from pathlib import Path
from typing import Any

import torch

from translator import __version__
from translator.errors import UserError
from translator.fileio import atomic_write_bytes

__all__ = ["FORMAT", "atomic_write_bytes", "load_checkpoint", "save_checkpoint"]

FORMAT = 1  # bump when the layout changes in a way old code cannot read


def save_checkpoint(path: str | Path, payload: dict[str, Any]) -> None:
    buf = io.BytesIO()
    torch.save({"format": FORMAT, "version": __version__, **payload}, buf)
    path = Path(path)
    try:
        atomic_write_bytes(path, buf.getvalue())
    except OSError as err:
        raise UserError(
            f"cannot write checkpoint {path}: {err.strerror or err}",
            "check free disk space and that the run directory is writable",
        ) from None


def load_checkpoint(path: str | Path) -> dict[str, Any]:
    path = Path(path)
    if not path.is_file():
        raise UserError(
            f"checkpoint not found: {path}", "training writes RUN_DIR/best.pt and RUN_DIR/last.pt"
        )
    try:
        ckpt = torch.load(path, map_location="cpu", weights_only=True)
    except pickle.UnpicklingError as err:
        # torch's message is a multi-line essay with terminal colour codes; keep only its reason.
        reason = str(err).split("WeightsUnpickler error:", 1)[-1]
        reason = reason.split("Check the documentation")[0]
        reason = " ".join(re.sub(r"\x1b\[[0-9;]*m", "", reason).split()).split(". ")[0]
        raise UserError(
            f"{path}: refused to load, it holds objects other than weights "
            f"({reason[:120] or 'unsafe content'})"
        ) from None
    except Exception:  # a garbage file can make the unpickler fail in any way (KeyError, ...)
        raise UserError(
            f"{path}: not a readable checkpoint (truncated or corrupt)",
            "use the run's other checkpoint (best.pt or last.pt); both are written atomically",
        ) from None
    if not isinstance(ckpt, dict) or "format" not in ckpt or "model" not in ckpt:
        raise UserError(f"{path}: not a translator checkpoint")
    if ckpt["format"] != FORMAT:
        raise UserError(
            f"{path}: checkpoint format {ckpt['format']} (written by translator "
            f"{ckpt.get('version', '?')}) cannot be read by translator {__version__}, "
            f"which reads format {FORMAT}"
        )
    return ckpt
