"""Self-contained checkpoints, written atomically and loaded without running code.

A checkpoint holds the resolved config, the sentencepiece model bytes, the
weights and (for resuming) the training state; `Checkpoint` owns that layout,
the functions below the file around it. It is written atomically
(translator.fileio): a crash at any moment leaves either the old file or the
new one, never half of one.
Loading uses `torch.load(weights_only=True)`, which refuses pickled code.
"""

from __future__ import annotations

import hashlib
import pickle
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch

from translator import __version__
from translator.config import Config, config_from_dict
from translator.data.tokenizer import Tokenizer, fingerprint
from translator.data.vocab import tokenizer_from_state
from translator.errors import UserError, checkpoint_not_found
from translator.fileio import atomic_open, atomic_write_bytes, writable_file
from translator.models.base import Seq2Seq
from translator.models.family import build_model

__all__ = ["FORMAT", "Checkpoint", "atomic_write_bytes", "load_checkpoint", "save_checkpoint"]

FORMAT = 1  # bump when the layout changes in a way old code cannot read


def save_checkpoint(path: str | Path, payload: dict[str, Any]) -> None:
    """Written straight into the temporary file: no copy of the checkpoint is ever held in
    memory (a run's last.pt with its optimizer state is three times the weights)."""
    path = Path(path)
    try:
        with atomic_open(path, "wb") as f:
            torch.save({"format": FORMAT, "version": __version__, **payload}, f)
    except (OSError, RuntimeError) as err:
        # torch's zip writer turns a full disk into a RuntimeError raised while the OSError
        # is handled: the OSError is the reason
        cause = err if isinstance(err, OSError) else err.__context__
        if not isinstance(cause, OSError):
            raise
        raise UserError(
            f"cannot write checkpoint {path}: {cause.strerror or cause}",
            "check free disk space and that the run directory is writable",
        ) from None


def check_replaceable(path: str | Path, option: str, command: str, ours=None) -> None:
    """Refuse in one line to replace an existing output file `path` unless it is a
    checkpoint `command` wrote (`ours(payload)`, where given, says so) and nothing trained
    since: a trained one (it holds training progress: a run's last.pt, a model fine-tuned
    from an import, which keeps the import's record) and any other file are refused."""
    path = Path(path)
    if not path.exists():
        return
    if path.is_dir():  # named as every command names a folder given for a file
        writable_file(path)
    try:
        ckpt = load_checkpoint(path)
    except UserError:
        ckpt = None
    if ckpt is None or (ours is not None and not ours(ckpt)):
        raise UserError(
            f"{option} {path} exists and is not a checkpoint translator {command} wrote; "
            "refusing to replace it",
            "give a new file name",
        )
    progress = (ckpt.get("train_state") or {}).get("progress")
    if isinstance(progress, dict) and progress.get("step"):
        raise UserError(
            f"{option} {path} is a model trained for {progress['step']} steps; refusing "
            "to replace it",
            "give a new file name",
        )


def load_checkpoint(path: str | Path) -> dict[str, Any]:
    path = Path(path)
    if path.is_dir():
        what = "a folder, not a checkpoint file"
        if (path / "manifest.json").is_file():  # (engines/export.py's folder)
            what = "an exported model, not a checkpoint file; give the one it was exported from"
        raise UserError(f"{path} is {what}", "training writes RUN_DIR/best.pt and RUN_DIR/last.pt")
    if not path.is_file():
        raise checkpoint_not_found(path) if not path.exists() else UserError(
            f"{path} is a pipe or a device, not a checkpoint file")  # fmt: skip
    with open(path, "rb") as f:
        magic = f.read(2)
    # torch.save writes a zip file (or, in its legacy format, a pickle): anything else is not
    # a checkpoint at all, and the unpickler's complaint about it would mislead
    if magic not in (b"PK", b"\x80\x02"):
        raise UserError(f"{path}: not a checkpoint (not a file that torch.save wrote)")
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
        if _argos_package(path):
            raise UserError(
                f"{path}: an Argos Translate package, which translator writes but does not read",
                "give the checkpoint it was exported from, or install it with argospm",
            ) from None
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


def _argos_package(path: Path) -> bool:
    """Whether `path` is a zip file of the shape of an .argosmodel (a folder holding
    metadata.json beside a CTranslate2 model/), which torch.load cannot read either."""
    import zipfile

    try:
        with zipfile.ZipFile(path) as z:
            names = z.namelist()
    except (zipfile.BadZipFile, OSError):
        return False
    return any(n.endswith("/metadata.json") for n in names) and any("/model/" in n for n in names)


def weights_fingerprint(model: dict[str, torch.Tensor]) -> str:
    """A digest of a model's weights (names, shapes, types and values): which trained model
    it is, whatever file it was copied to."""
    digest = hashlib.blake2b(digest_size=12)
    for name in sorted(model):
        tensor = model[name].detach().cpu().contiguous()
        digest.update(f"{name}:{tuple(tensor.shape)}:{tensor.dtype};".encode())
        if tensor.numel():
            digest.update(tensor.reshape(-1).view(torch.uint8).numpy())
    return digest.hexdigest()


def members_key(models: list[dict[str, torch.Tensor]]) -> str:
    """An ensemble's identity: its members' fingerprints, in any order (the mean of their
    log-probabilities does not depend on it)."""
    return "+".join(sorted(weights_fingerprint(m) for m in models))


def _dict_or_none(value: Any) -> dict | None:
    return value if isinstance(value, dict) else None


@dataclass
class Checkpoint:
    """The contents of one checkpoint file, and the one place that knows its layout:

        {"format", "version", "config", "tokenizer", "model",
         "train_state": {"progress", "rng", "rng_other_ranks", "optimizer", "scaler", "ema"},
         "source", "calibration", "ensemble_calibrations"}

    `source` (imported models only, translator/pretrained/): where the weights came from,
    the released model's card and licence, and how its ids map to ours. `calibration`
    (`translator calibrate`): how its confidence is computed (decode/confidence.py);
    `ensemble_calibrations` (`translator calibrate --ensemble`, kept in the first member):
    the same for ensembles it leads, by `members_key` of their weights.
    `rng` holds the random state of every training process in rank order; the file keeps
    rank 0's under "rng" (where single-process checkpoints always had it) and the others'
    under "rng_other_ranks". best.pt carries no optimizer and no random state: only last.pt
    resumes. With `train.ema_decay`, last.pt also holds the moving average of the weights
    (`ema`: decay, updates, weights) and best.pt holds the averaged weights as its `model`.
    Files written before the other ranks' state was saved load with `processes`
    None (unknown).
    """

    config: dict
    tokenizer: dict
    model: dict
    progress: dict | None = None  # the trainer's TrainState as a dict
    rng: list[dict] = field(default_factory=list)
    optimizer: dict | None = None
    scaler: dict | None = None
    ema: dict | None = None  # translator.train.ema.WeightEMA.state_dict() (last.pt, EMA runs)
    source: dict | None = None  # of an imported model: origin, card, licence, id table
    calibration: dict | None = None  # decode/confidence.py's Calibration.to_dict()
    ensemble_calibrations: dict | None = None  # members_key -> Calibration.to_dict()
    every_rank: bool = True  # `rng` holds every process's state (older files: rank 0's alone)
    version: str = __version__  # of translator that wrote it

    @property
    def processes(self) -> int | None:
        """How many processes the saved run had, where the file says."""
        return len(self.rng) if self.rng and self.every_rank else None

    # -- the file ----------------------------------------------------------------------------
    def payload(self) -> dict[str, Any]:
        train_state: dict[str, Any] = {"progress": self.progress}
        if self.rng:
            train_state["rng"] = self.rng[0]
            train_state["rng_other_ranks"] = list(self.rng[1:])
        if self.optimizer is not None:
            train_state["optimizer"] = self.optimizer
            train_state["scaler"] = self.scaler
        if self.ema is not None:
            train_state["ema"] = self.ema
        out = {
            "config": self.config,
            "tokenizer": self.tokenizer,
            "model": self.model,
            "train_state": train_state,
        }
        if self.source is not None:
            out["source"] = self.source
        if self.calibration is not None:
            out["calibration"] = self.calibration
        if self.ensemble_calibrations:
            out["ensemble_calibrations"] = self.ensemble_calibrations
        return out

    @classmethod
    def from_payload(cls, raw: dict[str, Any]) -> Checkpoint:
        """Lenient on purpose: what a use needs is checked by that use (build, resume)."""
        ts = raw.get("train_state")
        ts = ts if isinstance(ts, dict) else {}
        others = ts.get("rng_other_ranks")
        rng = [ts["rng"], *(others or [])] if "rng" in ts else []
        return cls(
            config=raw.get("config"),
            tokenizer=raw.get("tokenizer"),
            model=raw.get("model"),
            progress=ts.get("progress"),
            rng=rng,
            optimizer=ts.get("optimizer"),
            scaler=ts.get("scaler"),
            ema=ts.get("ema"),
            source=raw.get("source") if isinstance(raw.get("source"), dict) else None,
            calibration=_dict_or_none(raw.get("calibration")),
            ensemble_calibrations=_dict_or_none(raw.get("ensemble_calibrations")),
            every_rank=isinstance(others, list),
            version=raw.get("version", "?"),
        )

    def save(self, path: str | Path) -> None:
        save_checkpoint(path, self.payload())

    @classmethod
    def load(cls, path: str | Path) -> Checkpoint:
        """Every use needs the weights: a file whose `model` is not names to tensors is
        refused here, with the key that is wrong."""
        ckpt = cls.from_payload(load_checkpoint(path))
        if not isinstance(ckpt.model, dict):
            raise UserError(
                f"{path}: not a translator model checkpoint (key 'model' must map weight names "
                f"to tensors, got {type(ckpt.model).__name__})"
            )
        for name, value in ckpt.model.items():
            if not isinstance(name, str) or not isinstance(value, torch.Tensor):
                raise UserError(
                    f"{path}: weight {str(name)[:80]!r} under key 'model' is "
                    f"{type(value).__name__}, not a tensor (the file was edited or is not ours)"
                )
        return ckpt

    # -- what it holds -----------------------------------------------------------------------
    def build_tokenizer(self, where: str) -> Tokenizer:
        """The tokenizer, checked against the fingerprint its weights were trained with."""
        state = self.tokenizer
        if not isinstance(state, dict) or not isinstance(state.get("src"), bytes):
            raise UserError(f"{where}: not a translator model checkpoint (it has no tokenizer)")
        if not isinstance(state.get("tgt"), bytes | None):
            raise UserError(
                f"{where}: key 'tokenizer.tgt' must be a sentencepiece model's bytes or absent, "
                f"got {type(state['tgt']).__name__}"
            )
        if not isinstance(state.get("vocab"), dict | None):
            raise UserError(f"{where}: key 'tokenizer.vocab' must be a table of pieces or absent")
        expected = state.get("sha256")
        found = fingerprint(state["src"], state.get("tgt"), state.get("vocab"))
        if expected is not None and expected != found:
            raise UserError(
                f"{where}: the tokenizer in the checkpoint is not the one its weights were "
                "trained with (fingerprint mismatch)",
                "use the checkpoint as training wrote it",
            )
        try:
            return tokenizer_from_state(state)
        except UserError as err:
            raise UserError(f"{where}: {err.message}") from None

    def load_weights(self, model: torch.nn.Module, where: str) -> None:
        # a run that diverged saves nan weights, which translate every sentence to nothing
        for name, value in self.model.items():
            if value.is_floating_point() and not torch.isfinite(value).all():
                raise UserError(
                    f"{where}: weight '{name}' holds inf or nan values (training diverged, "
                    "or the file was edited)",
                    "use an earlier checkpoint of the run",
                )
        try:
            model.load_state_dict(self.model)
        except RuntimeError as err:
            first = str(err).splitlines()[0]
            raise UserError(
                f"{where}: weights do not fit the saved config and tokenizer ({first})",
                "was the checkpoint edited or paired with another tokenizer?",
            ) from None

    def build(self, where: str) -> tuple[Config, Tokenizer, Seq2Seq]:
        """(config, tokenizer, model with the saved weights): all that translating needs."""
        tokenizer = self.build_tokenizer(where)
        cfg = config_from_dict(self.config, f"{where} (saved config)")
        model = build_model(
            cfg.model, tokenizer.src_vocab_size, tokenizer.tgt_vocab_size, tokenizer.joint
        )
        self.load_weights(model, where)
        model.never_output = tokenizer.never_output(cfg.data.tags)
        return cfg, tokenizer, model
