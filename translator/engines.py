"""Opening a model to translate with: a checkpoint file (PyTorch, optionally quantized)
or an exported folder (CTranslate2). Both give an object with the same `translate`."""

from __future__ import annotations

from pathlib import Path


def open_translator(path: str | Path, device: str = "auto", quantize: str | None = None):
    """inference.Translator for a checkpoint file, ct2.ExportedTranslator for a folder."""
    from translator.errors import UserError

    path = Path(path)
    if path.is_dir():
        if quantize is not None:
            raise UserError(
                f"--quantize {quantize}: {path} is an exported model, quantized when it was "
                "exported (translator export --quantization); --quantize is for checkpoint files"
            )
        from translator.ct2 import ExportedTranslator

        return ExportedTranslator(path, device)
    from translator.inference import Translator

    if quantize is None:
        return Translator.from_checkpoint(str(path), device)
    check_quantize(quantize, device)
    return quantize_translator(Translator.from_checkpoint(str(path), "cpu"), quantize)


def check_quantize(quantize: str, device: str) -> None:
    """A one-line error for an unknown scheme or a device other than the CPU."""
    from translator.errors import UserError
    from translator.quantize import check_scheme

    check_scheme(quantize)
    if device not in ("auto", "cpu"):
        raise UserError(
            f"--quantize {quantize} runs on the CPU (PyTorch dynamic quantization), "
            f"not on --device {device}",
            "use --device cpu",
        )


def quantize_translator(translator, quantize: str):
    """The translator with its model quantized (on the CPU)."""
    from translator.quantize import quantize_model

    translator.model = quantize_model(translator.model, quantize)
    return translator
