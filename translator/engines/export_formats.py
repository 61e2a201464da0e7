"""`translator export --format FORMAT`: the exporter of each format. CTranslate2's is
engines/export.py, Hugging Face's pretrained/export_hf.py, Argos Translate's
engines/export_argos.py (built on the CTranslate2 export)."""

from __future__ import annotations

from pathlib import Path

from translator.engines.export import FORMATS, describe, export_checkpoint
from translator.errors import UserError


def export_model(
    checkpoint: Path,
    fmt: str,
    quantization: str,
    output: Path,
    vocab_map: bool = False,
    overrides: list[str] | None = None,
) -> str:
    """Export `checkpoint` in format `fmt` to `output`: the line to print."""
    if fmt not in FORMATS:
        raise UserError(f"--format {fmt}: the formats are {', '.join(FORMATS)}")
    if fmt == "ctranslate2":
        return describe(
            *export_checkpoint(checkpoint, fmt, quantization, output, vocab_map, overrides)
        )
    if vocab_map:
        raise UserError(f"--vocab-map: only --format ctranslate2 takes a shortlist, not {fmt}")
    if fmt == "huggingface":
        if quantization != "float32":
            raise UserError(
                f"--quantization {quantization}: --format huggingface writes float32 weights only"
            )
        from translator.pretrained.export_hf import export_huggingface

        return export_huggingface(Path(checkpoint), Path(output), overrides)
    from translator.engines.export_argos import export_argos

    return export_argos(Path(checkpoint), Path(output), quantization, overrides)
