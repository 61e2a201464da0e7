"""`translator import`: a released model (a Hugging Face MarianMT folder or hub name) as an
ordinary translator checkpoint."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from translator.cli_options import output_option


def import_model(
    source: Annotated[
        str,
        typer.Argument(
            metavar="SOURCE",
            help="A Hugging Face MarianMT folder, or a hub name such as Helsinki-NLP/opus-mt-de-en",
        ),
    ],
    output: Annotated[Path, output_option("--output", "The checkpoint to write")],
):
    """Import a released model as a checkpoint that every command takes.

    The checkpoint carries the model's subword models, vocabulary, weights, and its card and
    licence where the folder has them. A hub name is downloaded with huggingface_hub."""
    from translator.pretrained import import_pretrained

    typer.echo(import_pretrained(source, output))
