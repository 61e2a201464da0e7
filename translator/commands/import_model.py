"""`translator import`: a released model (a Hugging Face folder or hub name, an OPUS-MT
release) as an ordinary translator checkpoint."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer


def import_model(
    source: Annotated[
        str,
        typer.Argument(
            metavar="SOURCE",
            help="A Hugging Face MarianMT, M2M100 or NLLB-200 folder, a hub name such as "
            "Helsinki-NLP/opus-mt-de-en, or an OPUS-MT .npz folder or .zip",
        ),
    ],
    output: Annotated[
        Path,
        typer.Option(
            "--output", metavar="FILE", help="The checkpoint to write (its folder is made)"
        ),
    ],
    src_lang: Annotated[
        str | None,
        typer.Option("--src-lang", metavar="LANG", help="The default source language's code"),
    ] = None,
    tgt_lang: Annotated[
        str | None,
        typer.Option("--tgt-lang", metavar="LANG", help="The default target language's code"),
    ] = None,
):
    """Import a released model as a checkpoint that every command takes.

    The checkpoint carries the model's subword models, vocabulary, weights, and its card and
    licence where the folder has them. A hub name is downloaded with huggingface_hub.
    --src-lang and --tgt-lang set the languages of a model of language codes (NLLB-200,
    M2M100, OPUS-MT's multilingual models) that translate, eval and serve take when a call
    names none."""
    from translator.pretrained import import_pretrained

    typer.echo(import_pretrained(source, output, src_lang, tgt_lang))
