"""What an exported folder (translator/engines/export.py) holds, checked before CTranslate2
opens it: its manifest, whole and of a format this translator reads, every file it lists
at its recorded size, the sentencepiece model it was exported with, and the calibration of
its confidence (translator calibrate), where the checkpoint had one."""

from __future__ import annotations

import json
from pathlib import Path

from translator.data.tokenizer import Tokenizer, fingerprint
from translator.data.vocab import tokenizer_from_state
from translator.engines.export import FORMAT_VERSION, MANIFEST, MANIFEST_FORMAT, QUANTIZATIONS
from translator.errors import UserError

# the weights file of a Hugging Face folder (one `export --format huggingface` writes too)
HF_WEIGHTS = ("model.safetensors", "model.safetensors.index.json", "pytorch_model.bin",
              "pytorch_model.bin.index.json")  # fmt: skip
HINT = "write it again with `translator export --checkpoint C --format ctranslate2 --output DIR`"


def hugging_face_folder(folder: Path) -> bool:
    """Whether `folder` holds a Hugging Face model's weights and no export manifest."""
    weights = any((folder / name).is_file() for name in HF_WEIGHTS)
    return weights and not (folder / MANIFEST).is_file()


def read_manifest(folder: Path) -> dict:
    """The manifest of an exported folder, after checking that the folder is whole."""
    path = folder / MANIFEST
    if hugging_face_folder(folder):
        raise UserError(
            f"{folder}: a Hugging Face model folder (no {MANIFEST}), which is read once imported",
            f"translator import {folder} --output MODEL.pt, then --checkpoint MODEL.pt",
        )
    if not path.is_file():
        raise UserError(
            f"{folder}: not an exported model ({MANIFEST} is missing)",
            "give a checkpoint file such as RUN/best.pt, or a folder `translator export` wrote",
        )
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
        files = manifest["files"]
        kind, version = manifest["format"], manifest["format_version"]
        assert isinstance(files, dict) and isinstance(manifest["config"], dict)
    except (ValueError, KeyError, TypeError, AssertionError, UnicodeDecodeError):
        raise UserError(f"{path}: not a readable export manifest (corrupt)", HINT) from None
    if kind != MANIFEST_FORMAT or version != FORMAT_VERSION:
        raise UserError(
            f"{path}: export format {kind} {version} cannot be read by this translator, "
            f"which reads {MANIFEST_FORMAT} {FORMAT_VERSION}",
            HINT,
        )
    problem = _manifest_problem(manifest)
    if problem:
        raise UserError(f"{path}: {problem} (the file was edited or is not ours)", HINT)
    for name, size in files.items():
        file = folder / name
        if not file.is_file():
            raise UserError(f"{folder}: the export is incomplete ({name} is missing)", HINT)
        if file.stat().st_size != size:
            raise UserError(
                f"{folder}: {name} has {file.stat().st_size} bytes, the manifest says "
                f"{size} (truncated or replaced)",
                HINT,
            )
    return manifest


def _manifest_problem(manifest: dict) -> str | None:
    """What is wrong with the types of a manifest's keys that loading uses, if anything."""
    for name, size in manifest["files"].items():
        if type(size) is not int or Path(name).is_absolute() or ".." in Path(name).parts:
            return f"key 'files' must map file names in the folder to sizes, got {name!r}: {size!r}"
    if manifest.get("quantization", "float32") not in QUANTIZATIONS:
        return f"key 'quantization' must be one of {', '.join(QUANTIZATIONS)}"
    tokenizer = manifest.get("tokenizer")
    if not isinstance(tokenizer, dict) or not isinstance(tokenizer.get("source"), str):
        return "key 'tokenizer' must be a mapping that names the source model file"
    if not isinstance(tokenizer.get("target"), str | None):
        return "key 'tokenizer.target' must name a file or be null"
    return None


def folder_tokenizer(folder: Path, manifest: dict) -> Tokenizer:
    meta = manifest.get("tokenizer") or {}
    try:
        src = (folder / meta["source"]).read_bytes()
        tgt = (folder / meta["target"]).read_bytes() if meta.get("target") else None
    except (KeyError, TypeError, OSError):
        raise UserError(f"{folder}: the export's sentencepiece model is missing", HINT) from None
    vocab = meta.get("vocab") if isinstance(meta.get("vocab"), dict) else None
    if fingerprint(src, tgt, vocab) != meta.get("sha256"):
        raise UserError(
            f"{folder}: the sentencepiece model is not the one the model was exported with "
            "(fingerprint mismatch)",
            HINT,
        )
    try:
        return tokenizer_from_state({"src": src, "tgt": tgt, "vocab": vocab})
    except UserError as err:
        raise UserError(f"{folder}: {err.message}") from None


def folder_calibration(folder: Path, manifest: dict):
    """The manifest's calibration (decode/confidence.py's Calibration), or None where the
    checkpoint had none when it was exported."""
    from translator.decode.confidence import Calibration

    saved = manifest.get("calibration")
    if saved is None:
        return None
    try:
        cal = Calibration.from_dict(saved)
        sizes = {len(cal.weights), len(cal.mean), len(cal.scale), len(cal.features)}
        assert sizes == {len(cal.features)}
        float(cal.bias), float(cal.threshold)
    except (TypeError, ValueError, AssertionError):
        raise UserError(
            f"{folder / MANIFEST}: key 'calibration' is not a calibration of this translator's "
            "features (the file was edited or is not ours)",
            HINT,
        ) from None
    return cal
