"""`translator export --format argos`: a checkpoint as an Argos Translate package, the
`.argosmodel` file that argostranslate (and LibreTranslate through it) installs with
`argostranslate.package.install_from_path`.

The package is a zip of one folder:

    translate-SRC_TGT-translator/
      metadata.json          argostranslate's keys (from_code, to_code, ...), plus
                             "translator": what wrote it (an existing --output is replaced
                             only where that key says translator did)
      model/                 the CTranslate2 export (translator/engines/export.py), adjusted
                             to how argostranslate calls CTranslate2 (below)
      sentencepiece.model    the source sentencepiece model, tags input-only
      README.md              what the model is; an imported model's card after it
      LICENSE*               an imported model's licence files, as released

How argostranslate 1.11 runs a package, and what the package does about it:
- It splits the text into sentences with MiniSBD (a model downloaded per source language
  on first use and cached) unless the package holds a minisbd/ or stanza/ folder. This
  package holds none: the first translation needs the internet once.
- It encodes each sentence into pieces with sentencepiece.model and passes them to
  CTranslate2 without an end token; the model was trained with </s> ending every source,
  so the package's CTranslate2 config sets add_source_eos.
- It decodes the output pieces with the same sentencepiece.model. A model with a target
  sentencepiece model of its own ships its source model: sentencepiece leaves a piece it
  does not know as its text, which argostranslate turns into words (its marks become
  spaces), as translator's own decoding of such pieces does.
- It searches without banning any token (and puts a source word in place of an <unk>
  output). translator's searches never output <pad>, <s>, the input-only tags, nor <unk>
  unless decode.allow_unk: the package's output layer gives those a bias of BANNED, which
  leaves every other probability as a ban before the softmax does.
- Its beam (ARGOS_BEAM_SIZE, default 4), length penalty (0.2, CTranslate2's) and length
  cap (256 tokens) are its own; with ARGOS_BEAM_SIZE=1 its output is translator's greedy
  output at that length cap, except that CTranslate2's default minimum length of 1 rules
  out the empty output translator's search may give. It also turns "_" in outputs into
  spaces. It caps nothing by the model's positions: position tables shorter than ROWS are
  extended with the model's own sinusoids, where CTranslate2 would stop with an error.
- One language pair per package: a model with several target languages (translator's
  target tags) or with language codes (imported NLLB, M2M100) is refused, since
  argostranslate adds nothing before a source.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import struct
import tempfile
import zipfile
from functools import partial
from pathlib import Path

import numpy as np

from translator import __version__
from translator.errors import UserError

SUFFIX = ".argosmodel"
BANNED = -1e4  # a logit bias no logit outweighs; finite, so float16 holds it too
BIAS = "decoder/projection/bias"
POSITIONS = ("encoder/position_encodings/encodings", "decoder/position_encodings/encodings")
ROWS = 1024  # CTranslate2's default input cap, above argostranslate's output cap of 256
_DTYPES = ("float32", "int8", "int16", "int32", "float16", "bfloat16")  # CTranslate2's ids
_SKIPPED = {"manifest.json", "source.model", "target.model", "vmap.txt"}  # not argos's


# ---------------------------------------------------------------- the output file


def _ours(path: Path) -> bool:
    """Whether `path` is an argos package this module wrote."""
    try:
        with zipfile.ZipFile(path) as zf:
            names = [n for n in zf.namelist() if n.count("/") == 1 and n.endswith("/metadata.json")]
            return len(names) == 1 and "translator" in json.loads(zf.read(names[0]))
    except (OSError, ValueError, KeyError, zipfile.BadZipFile, TypeError):
        return False


def _check_output(output: Path) -> None:
    if output.suffix != SUFFIX:
        raise UserError(f"--output {output}: an Argos Translate package is a {SUFFIX} file")
    if output.is_dir():
        raise UserError(f"--output {output} is a folder; give the name of a {SUFFIX} file")
    if output.exists() and not _ours(output):
        raise UserError(
            f"--output {output} exists and is not an argos package translator wrote; "
            "refusing to replace it",
            "give a new file name",
        )
    if not output.parent.is_dir():
        raise UserError(f"cannot write {output}: {output.parent} does not exist")


# ---------------------------------------------------------------- the model


def _read_string(data: bytes, at: int) -> tuple[str, int]:
    (size,) = struct.unpack_from("<H", data, at)
    return data[at + 2 : at + 1 + size].decode("utf-8"), at + 2 + size


def _write_string(text: str) -> bytes:
    raw = text.encode("utf-8")
    return struct.pack("<H", len(raw) + 1) + raw + b"\0"


def _read_model(path: Path) -> tuple[bytes, dict, bytes]:
    """A CTranslate2 model.bin (binary version 6): (header, variables, aliases), each
    variable name -> (shape, dtype id, bytes)."""
    data = path.read_bytes()
    (version,) = struct.unpack_from("<I", data, 0)
    if version != 6:
        raise UserError(f"{path}: CTranslate2 model format {version}; this export reads 6")
    _, at = _read_string(data, 4)  # the spec's name
    (count,) = struct.unpack_from("<I", data, at + 4)  # after the spec's revision
    head, at = data[: at + 4], at + 8
    variables = {}
    for _ in range(count):
        key, at = _read_string(data, at)
        rank = data[at]
        shape = struct.unpack_from(f"<{rank}I", data, at + 1)
        at += 1 + 4 * rank
        dtype, size = data[at], struct.unpack_from("<I", data, at + 1)[0]
        variables[key] = (shape, dtype, data[at + 5 : at + 5 + size])
        at += 5 + size
    return head, variables, data[at:]


def _write_model(path: Path, head: bytes, variables: dict, aliases: bytes) -> None:
    out = [head, struct.pack("<I", len(variables))]
    for key, (shape, dtype, raw) in variables.items():
        out += [_write_string(key), struct.pack(f"<B{len(shape)}I", len(shape), *shape)]
        out += [struct.pack("<BI", dtype, len(raw)), raw]
    path.write_bytes(b"".join(out) + aliases)


def adjust_model(model_bin: Path, banned: list[int], outputs: int, table) -> None:
    """Fit a CTranslate2 model.bin to argostranslate's calls: the target ids `banned` get a
    bias of BANNED in the output layer (of `outputs` rows; the bias is added where the model
    has none), and position tables shorter than ROWS are extended with `table(ROWS)` (the
    model's sinusoids) where their rows are its first ones, since argostranslate cannot cap
    the lengths by the model's positions."""
    head, variables, aliases = _read_model(model_bin)
    if BIAS in variables:
        _, dtype, raw = variables[BIAS]
        bias = np.frombuffer(raw, dtype=_DTYPES[dtype]).copy()
    else:
        dtype, bias = 0, np.zeros(outputs, dtype=np.float32)
    bias[banned] = BANNED
    variables[BIAS] = ((outputs,), dtype, bias.tobytes())
    for name in POSITIONS:  # one of them may be an alias of the other, which follows it
        shape, dtype, raw = variables.get(name, ((ROWS,), 0, b""))
        if shape[0] >= ROWS or dtype != 0:
            continue
        longer = np.asarray(table(ROWS), dtype=np.float32)
        if longer.shape[1:] == shape[1:] and np.allclose(
            longer[: shape[0]], np.frombuffer(raw, np.float32).reshape(shape), atol=1e-6
        ):
            variables[name] = (longer.shape, 0, longer.tobytes())
    _write_model(model_bin, head, variables, aliases)


def _sinusoids(model, rows: int):
    from translator.models.positions import sinusoids

    return sinusoids(rows, model.d_model, getattr(model, "positions", "interleaved")).numpy()


def _banned(cfg, tokenizer) -> list[int]:
    """The target ids translator's searches never output (engines/ct2.py bans the same)."""
    from translator.specials import BOS, PAD, UNK

    never = tokenizer.never_output(cfg.data.tags)
    return sorted({PAD, BOS, *never, *(() if cfg.decode.allow_unk else (UNK,))})


# ---------------------------------------------------------------- the package

USAGE = [
    "- argostranslate splits text into sentences with a MiniSBD model that it downloads for "
    "the source language on the first translation.",
    "- Its default compute type (ARGOS_COMPUTE_TYPE=auto) runs float32 weights in int8 where "
    "the CPU can; ARGOS_COMPUTE_TYPE=float32 keeps them float32.",
    "- With ARGOS_BEAM_SIZE=1 it gives translator's greedy output (`translator translate "
    "--beam 1 --max-len-a 0 --max-len-b 256`), except that it never gives an empty output "
    "and turns underscores into spaces.",
]


def _readme(cfg, checkpoint: Path, manifest: dict, source: dict | None) -> str:
    data, model = cfg.data, cfg.model
    lines = [
        f"# {data.src_lang} to {data.tgt_lang}",
        "",
        f"A {model.type} model ({model.enc_layers}+{model.dec_layers} layers, d_model "
        f"{model.d_model}) exported by translator {__version__} from {checkpoint.name} "
        f"(sha256 {manifest['source_checkpoint']['sha256'][:16]}), "
        f"{manifest['quantization']} weights.",
    ]
    if not manifest["tokenizer"]["joint"]:
        lines += [
            "",
            "The model has a sentencepiece model per side; this package holds the source "
            "side's, which decodes the target pieces it does not know as their text.",
        ]
    files = (source or {}).get("files") or {}
    card = next((text for name, text in files.items() if name.upper() == "README.MD"), None)
    origin = (source or {}).get("hub") or (source or {}).get("folder")
    lines += ["", "## Running it", "", *USAGE]
    if origin or card:
        lines += ["", f"## The released model{f': {origin}' if origin else ''}", ""]
        lines += [card.strip()] if card else []
    return "\n".join(lines) + "\n"


def folder_name(src: str, tgt: str) -> str:
    """The package's folder: argostranslate installs it under this name, so it names the
    writer, leaving another publisher's package of the pair (translate-de_en-1_9, ...) as it
    is, and holds no character a path treats apart."""
    name = f"translate-{src}_{tgt}-translator"
    return re.sub(r"[^\w.-]", "-", name)


def _metadata(cfg, checkpoint: Path, manifest: dict) -> dict:
    src, tgt = cfg.data.src_lang, cfg.data.tgt_lang
    return {
        "package_version": "1.0",
        "argos_version": "1.11",
        "type": "translate",
        "from_code": src,
        "from_name": src,
        "to_code": tgt,
        "to_name": tgt,
        "translator": {
            "version": __version__,
            "checkpoint": checkpoint.name,
            "checkpoint_sha256": manifest["source_checkpoint"]["sha256"],
            "quantization": manifest["quantization"],
        },
    }


def _load(checkpoint: Path, overrides: list[str] | None):
    """The checkpoint's config (with `overrides`), tokenizer and `source` record."""
    from translator.config import config_from_dict
    from translator.engines.export_settings import exported_config
    from translator.models.checkpoint import Checkpoint

    ckpt = Checkpoint.load(checkpoint)
    saved = config_from_dict(ckpt.config, f"{checkpoint} (saved config)")
    cfg = exported_config(ckpt, saved, checkpoint, overrides)
    return cfg, ckpt.build_tokenizer(str(checkpoint)), ckpt.source


def export_argos(
    checkpoint: Path, output: Path, quantization: str, overrides: list[str] | None
) -> str:
    """Write `checkpoint` as the Argos Translate package `output`; the line to print.
    `overrides` (KEY=VALUE) change the saved config, e.g. data.src_lang=de to name the
    package's languages."""
    from translator.config.languages import directions, multilingual
    from translator.data.tokenizer import input_only_tags
    from translator.engines.export import QUANTIZATIONS, check_family, export_checkpoint
    from translator.fileio import atomic_open

    checkpoint, output = Path(checkpoint), Path(output)
    if quantization not in QUANTIZATIONS:
        raise UserError(f"--quantization {quantization}: choose one of {', '.join(QUANTIZATIONS)}")
    cfg, tokenizer, source = _load(checkpoint, overrides)
    check_family(checkpoint, cfg.model.type, "argos", built_on="ctranslate2")  # (the first
    _check_output(output)  # reason to name: no file name makes a recurrent model exportable)
    if (source or {}).get("languages"):
        raise UserError(
            f"{checkpoint}: a model of language codes (NLLB's and M2M100's, or a multilingual "
            "OPUS-MT model's >>xx<< tokens) cannot be an Argos package: argostranslate puts "
            "no language code before a source"
        )
    if multilingual(cfg.data):
        pairs = ", ".join(f"{s}-{t}" for s, t in directions(cfg.data))
        raise UserError(
            f"{checkpoint}: an Argos package translates one language pair and this model has "
            f"several ({pairs}), whose target tags argostranslate cannot add"
        )
    src, tgt = cfg.data.src_lang, cfg.data.tgt_lang
    # (named as atomic_open names its files: writing the package removes a killed one's)
    scratch_name = {"prefix": f".{output.name}.{os.getpid()}-", "suffix": ".tmp"}
    with tempfile.TemporaryDirectory(**scratch_name, dir=output.parent) as scratch:
        ct2 = Path(scratch) / "ct2"
        manifest, _ = export_checkpoint(checkpoint, "ctranslate2", quantization, ct2, False,
                                        overrides)  # fmt: skip
        top = Path(scratch) / folder_name(src, tgt)
        (top / "model").mkdir(parents=True)
        for name in manifest["files"]:
            if name not in _SKIPPED:
                shutil.copyfile(ct2 / name, top / "model" / name)
        config = json.loads((top / "model" / "config.json").read_text(encoding="utf-8"))
        config["add_source_bos"], config["add_source_eos"] = False, True
        (top / "model" / "config.json").write_text(json.dumps(config, indent=1), "utf-8")
        table = partial(_sinusoids, cfg.model)
        adjust_model(top / "model" / "model.bin", _banned(cfg, tokenizer),
                     tokenizer.tgt_vocab_size, table)  # fmt: skip
        (top / "sentencepiece.model").write_bytes(input_only_tags(tokenizer.src_bytes))
        (top / "README.md").write_text(_readme(cfg, checkpoint, manifest, source), "utf-8")
        for name, text in ((source or {}).get("files") or {}).items():
            if name.upper().startswith(("LICENSE", "LICENCE")):
                (top / Path(name).name).write_text(text, "utf-8")
        metadata = _metadata(cfg, checkpoint, manifest)
        (top / "metadata.json").write_text(json.dumps(metadata, indent=1), "utf-8")
        try:
            with (
                atomic_open(output, "wb") as f,
                zipfile.ZipFile(f, "w", zipfile.ZIP_DEFLATED) as zf,
            ):
                for path in sorted(top.rglob("*")):
                    zf.write(path, path.relative_to(top.parent).as_posix())
        except OSError as err:
            raise UserError(
                f"cannot write {output}: {err.strerror or err}",
                "check free disk space and that the folder is writable",
            ) from None
    return (
        f"{cfg.model.type} model exported to {output} (Argos Translate package {src} -> {tgt}, "
        f"{quantization}, {output.stat().st_size / 1e6:.1f} MB)"
    )
