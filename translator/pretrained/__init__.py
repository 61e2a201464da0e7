"""Released models as translator checkpoints: `import_pretrained` reads a model folder (or
fetches a Hugging Face hub name) and writes an ordinary, self-contained checkpoint.

Supported: Hugging Face MarianMT folders (marian.py)."""

from __future__ import annotations

from pathlib import Path

from translator.errors import UserError


def import_pretrained(source: str, output: Path) -> str:
    """Write the checkpoint of `source` to `output`; a line saying what was written."""
    from translator.pretrained.files import resolve
    from translator.pretrained.marian import import_marian

    check_output(output)
    folder, origin = resolve(source)
    ckpt = import_marian(folder, origin)  # (refuses a folder of another architecture)
    ckpt.save(output)
    model = ckpt.config["model"]
    return (
        f"imported {source} (MarianMT, {model['enc_layers']}+{model['dec_layers']} layers, "
        f"d_model {model['d_model']}, vocabulary {ckpt.config['tokenizer']['vocab_size']}) "
        f"into {output}"
    )


def check_output(output: Path) -> None:
    """An existing --output is replaced only where it is a checkpoint `translator import`
    wrote; any other file is refused."""
    output = Path(output)
    if not output.exists():
        return
    from translator.models.checkpoint import load_checkpoint

    try:
        ours = isinstance(load_checkpoint(output).get("source"), dict)
    except UserError:
        ours = False
    if not ours:
        raise UserError(
            f"--output {output} exists and is not a checkpoint translator import wrote; "
            "refusing to replace it",
            "give a new file name",
        )
