"""`translator info`: what a checkpoint or an exported folder holds: the model, its
vocabularies and languages, its training progress, and where it came from (an imported
model's origin, licence and card)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Annotated

import typer

CARD_LINES = 5  # of the model card, printed without --card


def info(
    checkpoint: Annotated[
        Path,
        typer.Argument(
            metavar="CKPT", help="A checkpoint file, or a folder `translator export` wrote"
        ),
    ],
    card: Annotated[bool, typer.Option("--card", help="Print the whole model card")] = False,
):
    """Show what a checkpoint or an exported folder is, and where it came from.

    The model, its sizes, vocabularies and languages, its training progress, and an
    imported model's origin, licence and card."""
    typer.echo("\n".join(describe(checkpoint, card)))


def describe(path: Path, whole_card: bool = False) -> list[str]:
    """The lines `translator info` prints; a one-line UserError for a file that is neither
    a checkpoint nor an exported folder."""
    from translator.config import config_from_dict
    from translator.engines.ct2_folder import folder_tokenizer, hugging_face_folder, read_manifest

    origin = None  # the checkpoint of an export that did not record its progress
    written = True  # (by translator: a Hugging Face folder may be anyone's)
    if path.is_dir() and hugging_face_folder(path):
        ckpt = _imported(path)
        tokenizer = ckpt.build_tokenizer(str(path))
        cfg = config_from_dict(ckpt.config, f"{path} (as imported)")
        kind, written = "Hugging Face model folder, read as `translator import` reads it", False
        progress, source, version, calibration, ensembles = None, ckpt.source, None, None, 0
    elif path.is_dir():
        manifest = read_manifest(path)
        cfg = config_from_dict(manifest["config"], f"{path} (manifest config)")
        tokenizer = folder_tokenizer(path, manifest)
        kind = f"exported folder (CTranslate2, {manifest.get('quantization', 'float32')})"
        progress, source, version = (
            manifest.get("progress"),
            manifest.get("source"),
            manifest.get("translator_version"),
        )
        if progress is None and source is None:  # (an export that did not record it)
            origin = (manifest.get("source_checkpoint") or {}).get("path")
        calibration, ensembles = manifest.get("calibration"), 0
    else:
        from translator.models.checkpoint import Checkpoint

        ckpt = Checkpoint.load(path)
        tokenizer = ckpt.build_tokenizer(str(path))
        cfg = config_from_dict(ckpt.config, f"{path} (saved config)")
        resumable = " (resumable: it holds the optimizer state)" if ckpt.optimizer else ""
        kind = f"checkpoint{resumable}"
        progress, source, version = ckpt.progress, ckpt.source, ckpt.version
        calibration = ckpt.calibration
        ensembles = len(ckpt.ensemble_calibrations or {})
    lines = [f"{path}: {kind}" + (f", written by translator {version or '?'}" if written else "")]
    lines += _model(cfg, tokenizer)
    lines += _languages(cfg, source)
    lines += _progress(progress, origin)
    lines += _calibration(calibration)
    if ensembles:
        lines.append(f"confidence of ensembles it leads: calibrated for {ensembles} set(s) of "
                     "members (translator calibrate --ensemble)")  # fmt: skip
    lines += (
        _source(source, whole_card)
        if isinstance(source, dict)
        else ["origin: trained by translator"]
    )
    return lines


def _imported(folder: Path):
    """The checkpoint `translator import` would write of `folder`, in memory."""
    from translator.pretrained import importer
    from translator.pretrained.files import resolve

    folder, origin = resolve(str(folder))
    return importer(folder).import_folder(folder, origin)


def _model(cfg, tokenizer) -> list[str]:
    import torch

    from translator.models.family import build_model, title

    m = cfg.model
    # built on the meta device: the parameter count without the memory or the time of weights
    with torch.device("meta"):
        model = build_model(m, tokenizer.src_vocab_size, tokenizer.tgt_vocab_size, tokenizer.joint)
    keys = {
        k: v for k, v in m.to_dict().items() if k not in ("type", "dropout", "attention_dropout")
    }
    layout = ", ".join(f"{k} {v}" for k, v in keys.items())
    sizes = (
        f"vocabulary {tokenizer.src_vocab_size} (joint)"
        if tokenizer.joint
        else f"vocabulary {tokenizer.src_vocab_size} source, {tokenizer.tgt_vocab_size} target"
    )
    if tokenizer.vocab:
        sizes += " (piece tables of the released model's ids)"
    return [
        f"model: {title(m.type)} ({m.type}), {model.num_parameters():,} parameters",
        f"  {layout}",
        sizes,
    ]


def _languages(cfg, source) -> list[str]:
    from translator.config.languages import multilingual, source_languages, target_languages
    from translator.engines.lang_codes import language_codes

    data = cfg.data
    codes = language_codes(source) if isinstance(source, dict) else None
    if codes is not None:  # an imported model of language codes: its defaults, then them all
        target = data.tgt_lang if data.tgt_lang in codes else "none named (give --tgt-lang)"
        lines = [f"languages: {data.src_lang} -> {target}",
                 f"language codes: {len(codes)}: {', '.join(codes)}"]  # fmt: skip
    elif not multilingual(data):
        lines = [f"languages: {data.src_lang} -> {data.tgt_lang}"]
    else:
        lines = [
            f"languages: {', '.join(source_languages(data))} -> {', '.join(target_languages(data))}"
        ]
    if data.tags:
        lines.append(f"tags: {' '.join(data.tags)}")
    return lines


def _progress(progress, exported_from: str | None = None) -> list[str]:
    """`exported_from`: the checkpoint an export that did not record its progress came from."""
    averaged = progress.get("averaged_steps") if isinstance(progress, dict) else None
    if isinstance(averaged, list):
        steps = ", ".join("?" if s is None else str(s) for s in averaged)
        return [f"training: the average of {len(averaged)} checkpoint(s), of steps {steps}"]
    if exported_from is not None:
        return [f"training: as the checkpoint it was exported from ({exported_from})"]
    if not isinstance(progress, dict) or not progress.get("step"):
        return ["training: none (not trained here)"]
    line = f"training: step {progress['step']}, epoch {progress.get('epoch', 0) + 1}"
    if progress.get("best_step"):
        line += (
            f", best dev BLEU {progress.get('best_bleu', 0):.2f} at step {progress['best_step']}"
        )
    elif progress.get("losses"):
        line += f", training loss {progress['losses'][-1][1]:.3f}"
    return [line]


def _calibration(saved) -> list[str]:
    if not isinstance(saved, dict):
        return ["confidence: uncalibrated (translator calibrate fits it on a dev set)"]
    decode = saved.get("decode") if isinstance(saved.get("decode"), dict) else {}
    return [
        f"confidence: calibrated under beam {decode.get('beam', '?')}, length penalty "
        f"{decode.get('len_penalty', '?')}; words doubtful under "
        f"{float(saved.get('threshold', 0.5)):.3f}"
    ]


def licence(files: dict) -> str | None:
    """The licence a model card's front matter names, else a licence file's first line."""
    for name, text in files.items():
        if name.upper() == "README.MD":
            front = re.match(r"---\s*\n(.*?)\n---", text, re.S)
            found = front and re.search(r"^licen[sc]e:\s*(.+)$", front.group(1), re.M)
            if found:
                return found.group(1).strip().strip("'\"")
    for name, text in files.items():
        if name.upper().startswith(("LICENSE", "LICENCE")):
            first = next((line.strip() for line in text.splitlines() if line.strip()), "")
            return f"{first} ({name})" if first else name
    return None


def _source(source: dict, whole_card: bool) -> list[str]:
    files = source.get("files") if isinstance(source.get("files"), dict) else {}
    where = source.get("hub") or source.get("folder") or source.get("file") or "?"
    lines = [f"origin: imported from {where} ({source.get('format', '?')})"]
    has_card = any(n.upper() == "README.MD" for n in files)
    unstated = "its card names none" if has_card else "the model folder has no card"
    lines.append(f"licence: {licence(files) or f'not stated ({unstated} and no licence file)'}")
    ids = source.get("ids")
    if isinstance(ids, dict) and isinstance(ids.get("src"), list):
        sides = "one table for both sides" if ids.get("tgt") is None else "a table per side"
        lines.append(f"ids: mapped to the released model's ({sides})")
    card = next((t for n, t in files.items() if n.upper() == "README.MD"), None)
    if card is None:
        return lines + ["card: none"]
    # the first lines a person reads: after the front matter of tags and licence
    body = card if whole_card else re.sub(r"\A---\s*\n.*?\n---\s*\n", "", card, flags=re.S)
    text = body.strip("\n").splitlines()
    shown = text if whole_card else text[:CARD_LINES]
    lines.append(
        "card:"
        + (
            ""
            if whole_card or len(text) <= CARD_LINES
            else f" (first {CARD_LINES} of {len(text)} lines; --card prints it all)"
        )
    )
    return lines + [f"  {line}" for line in shown]
