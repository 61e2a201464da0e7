"""`translator export --format ctranslate2`: a checkpoint as a folder that CTranslate2 runs on
its own (the other formats: pretrained/export_hf.py, engines/export_argos.py; the command,
commands/export.py, picks one).

    FOLDER/
      model.bin, config.json,        written by CTranslate2's converter API from the spec
      *_vocabulary.json                the model family fills (models/*: export_spec)
      source.model [target.model]    the sentencepiece model(s) of the checkpoint
      [vmap.txt]                     with --vocab-map: the vocabulary shortlist
                                     (engines/shortlist.py), which decoding then uses
      [README.md, LICENSE...]        an imported model's card and licence files
      manifest.json                  format version, source checkpoint, config, decoding
                                     settings, tokenizer fingerprint, every file's size,
                                     an imported model's `source` record, the calibration
                                     of its confidence (null: none)

The folder is built beside its final place and renamed into it once whole, so an
interrupted export leaves no folder that `translate --checkpoint FOLDER` would trust;
an older export in the same place is replaced only then. translator/engines/ct2.py reads it.
"""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path

from translator import __version__
from translator.engines.export_settings import exported_config
from translator.errors import UserError, optional_import
from translator.fileio import atomic_write_bytes, file_digest
from translator.fileio.outputs import MARKER, building, claim_folder, mark
from translator.fileio.recognise import manifest_listed
from translator.models.checkpoint import Checkpoint
from translator.models.family import exporting
from translator.specials import BOS, EOS, UNK

log = logging.getLogger(__name__)

FORMATS = ("ctranslate2", "huggingface", "argos")
QUANTIZATIONS = ("float32", "int8", "int8_float32")
MANIFEST = "manifest.json"
MANIFEST_FORMAT = "translator-ctranslate2"
FORMAT_VERSION = 1  # bump when the folder's layout changes in a way old code cannot read
SOURCE_SPM, TARGET_SPM = "source.model", "target.model"
VMAP = "vmap.txt"  # the name CTranslate2 looks for in a model folder


def _earlier_export(folder: Path) -> set[str] | None:
    """An export written without the output marker: translator's manifest lists every
    file in the folder, so adopting it as translator's loses no file of the user's."""
    found = manifest_listed(folder)
    names = {p.name for p in folder.iterdir()} if found is not None else set()
    return names if found and found[0]["format"] == MANIFEST_FORMAT and names <= found[1] else None


def _check_output(output: Path) -> None:
    """Refuse to replace anything but an earlier export (or an empty folder): checked
    before the work, claimed (marked) only once there is an export to put there."""
    if output.is_file() or (output.exists() and not output.is_dir()):
        raise UserError(f"--output {output} is a file; give a folder to write the export to")
    if output.is_dir():
        claim_folder(output, "--output", _earlier_export, "export")


def _spec(model, tokenizer, fmt: str):
    """The model's spec with both vocabularies and the special tokens registered."""
    spec = model.export_spec(fmt)
    for side, register in (
        (tokenizer.src, spec.register_source_vocabulary),
        (tokenizer.tgt, spec.register_target_vocabulary),
    ):
        register([side.id_to_piece(i) for i in range(side.get_piece_size())])
    pieces = tokenizer.tgt.id_to_piece
    spec.config.unk_token, spec.config.bos_token = pieces(UNK), pieces(BOS)
    spec.config.eos_token, spec.config.decoder_start_token = pieces(EOS), pieces(BOS)
    spec.config.add_source_bos = spec.config.add_source_eos = False  # the <eos> is ours
    return spec


def _convert(ct2, model, tokenizer, fmt: str, quantization: str, folder: Path) -> None:
    class FromCheckpoint(ct2.converters.Converter):
        def _load(self):
            return _spec(model, tokenizer, fmt)

    FromCheckpoint().convert(str(folder), quantization=quantization, force=True)


def _fsync_tree(folder: Path) -> None:
    for path in folder.iterdir():
        with open(path, "rb") as f:
            os.fsync(f.fileno())


def check_family(checkpoint: Path, model_type: str, fmt: str, built_on: str | None = None):
    """A one-line UserError unless `model_type` exports to `fmt`, whose exporter writes the
    format `built_on` (Argos: a CTranslate2 export inside; None: fmt itself)."""
    if model_type not in exporting(built_on or fmt):
        raise UserError(
            f"{checkpoint}: model.type {model_type} cannot be exported to {fmt}; "
            f"only {', '.join(exporting(built_on or fmt))} checkpoints can"
        )


def export_checkpoint(
    checkpoint: Path,
    fmt: str,
    quantization: str,
    output: Path,
    vocab_map: bool = False,
    overrides: list[str] | None = None,
) -> tuple[dict, Path]:
    """Write checkpoint's model as an exported folder at `output`: (manifest, folder).
    `vocab_map`: with a shortlist learnt from the checkpoint's training data, found where
    the saved config says unless `overrides` (KEY=VALUE) point elsewhere."""
    checkpoint, output = Path(checkpoint), Path(output)
    if fmt != "ctranslate2":
        raise UserError(f"--format {fmt}: this function writes ctranslate2 folders only")
    if quantization not in QUANTIZATIONS:
        raise UserError(f"--quantization {quantization}: choose one of {', '.join(QUANTIZATIONS)}")
    _check_output(output)
    ckpt = Checkpoint.load(checkpoint)
    cfg, tokenizer, model = ckpt.build(str(checkpoint))
    cfg = exported_config(ckpt, cfg, checkpoint, overrides)
    check_family(checkpoint, cfg.model.type, fmt)
    ct2 = optional_import("ctranslate2", "ctranslate2", "exports to CTranslate2")
    with building(output) as tmp:
        _convert(ct2, model.eval(), tokenizer, fmt, quantization, tmp)
        mark(tmp, (), scratch=True)
        (tmp / SOURCE_SPM).write_bytes(tokenizer.src_bytes)
        if not tokenizer.joint:
            (tmp / TARGET_SPM).write_bytes(tokenizer.tgt_bytes)
        shortlist = _vocab_map(cfg, tokenizer, tmp) if vocab_map else None
        from translator.models.transformer_ct2 import alignment_record
        from translator.pretrained.hf_files import card_files

        for name, text in card_files(ckpt.source).items():  # an imported model's licence
            (tmp / name).write_text(text, encoding="utf-8")
        _fsync_tree(tmp)
        manifest = {
            "format": MANIFEST_FORMAT,
            "format_version": FORMAT_VERSION,
            "translator_version": __version__,
            "ctranslate2_version": ct2.__version__,
            "quantization": quantization,
            "source_checkpoint": {
                "path": str(checkpoint.resolve()),
                "bytes": checkpoint.stat().st_size,
                "sha256": file_digest(checkpoint),
            },
            "tokenizer": {
                "sha256": tokenizer.fingerprint(),
                "joint": tokenizer.joint,
                "source": SOURCE_SPM,
                "target": None if tokenizer.joint else TARGET_SPM,
                # an imported model's piece tables (data/vocab.py), where it has them
                **({"vocab": tokenizer.vocab} if tokenizer.vocab else {}),
            },
            "config": cfg.to_dict(),
            "decode": cfg.decode.to_dict(),
            "progress": ckpt.progress,  # how far the checkpoint trained (translator info)
            "vocab_map": shortlist,
            # how confidence is computed (translator calibrate), or None: uncalibrated
            "calibration": ckpt.calibration,
            # the attention alignments come from (an export without it: CTranslate2's default)
            "alignment": alignment_record(model),
            # an imported model's origin, card and licence (translator info shows them)
            # (the released tokenizer's files stay in the checkpoint: the folder has its own)
            **({"source": _without(ckpt.source, "tokenizer_files")} if ckpt.source else {}),
            "files": {p.name: p.stat().st_size for p in sorted(tmp.iterdir()) if p.name != MARKER},
        }
        atomic_write_bytes(tmp / MANIFEST, json.dumps(manifest, indent=1).encode("utf-8"))
    return manifest, output


def _vocab_map(cfg, tokenizer, folder: Path) -> dict:
    """The shortlist of the checkpoint's training pairs, as folder/vmap.txt."""
    from itertools import chain

    from translator.data.corpora import training_sources
    from translator.engines.shortlist import build_vmap

    pairs = chain.from_iterable(source.pairs("train") for _, source in training_sources(cfg))
    try:
        return build_vmap(tokenizer, pairs, folder / VMAP)
    except UserError as err:  # most often: the training files have moved since training
        raise UserError(
            f"--vocab-map reads the training data: {err.message}",
            "point --set at where it is now, e.g. --set data.dir=PATH or --set data.corpora=...",
        ) from None


def describe(manifest: dict, folder: Path) -> str:
    """One line for the command to print."""
    size = sum(manifest["files"].values())
    return (
        f"{manifest['config']['model']['type']} model exported to {folder} "
        f"(CTranslate2, {manifest['quantization']}, {size / 1e6:.1f} MB"
        + (", with a vocabulary shortlist" if manifest.get("vocab_map") else "")
        + ")"
    )


def _without(record: dict, key: str) -> dict:
    return {k: v for k, v in record.items() if k != key}
