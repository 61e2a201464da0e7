"""`translator export` and `translator curves`: a checkpoint as a CTranslate2 folder, a
Hugging Face folder or an Argos Translate package, and runs' curves drawn."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from translator.cli_options import SetOpt, checkpoint_option, picture_option


def export(
    checkpoint: Annotated[Path, checkpoint_option("The checkpoint to export", "FILE")],
    output: Annotated[
        Path, typer.Option("--output", metavar="DIR", help="The folder to write (made if absent)")
    ],
    format_: Annotated[
        str,
        typer.Option(
            "--format",
            metavar="FORMAT",
            help="ctranslate2 (a folder CTranslate2 runs), huggingface (a folder transformers "
            "loads: MarianMTModel or M2M100ForConditionalGeneration with its tokenizer) or argos "
            "(an .argosmodel package)",
        ),
    ] = "ctranslate2",
    quantization: Annotated[
        str,
        typer.Option(
            "--quantization",
            metavar="TYPE",
            help="float32, int8 or int8_float32 weights (huggingface: float32 only)",
        ),
    ] = "float32",
    vocab_map: Annotated[
        bool,
        typer.Option(
            "--vocab-map",
            help="Add a vocabulary shortlist learnt from the checkpoint's training data "
            "(decoding then scores only the subwords a source can bring; ctranslate2 only)",
        ),
    ] = False,
    set_: SetOpt = None,
):
    """Write a Transformer for CTranslate2, Hugging Face transformers or Argos Translate.

    --format ctranslate2 writes a CTranslate2 model folder (fast CPU decoding), huggingface
    a transformers folder, argos an .argosmodel package.

    translate, eval and serve take a CTranslate2 folder as --checkpoint. --set points
    --vocab-map at training files that have moved (e.g. --set data.dir=PATH). A Hugging Face
    export needs a layout a transformers class computes (post-norm with model.positions
    halves: MarianMTModel; pre-norm with final norms and model.positions m2m100:
    M2M100ForConditionalGeneration); any other model is refused."""
    from translator.engines.export_formats import export_model

    typer.echo(export_model(checkpoint, format_, quantization, output, vocab_map, set_))


def curves(
    runs: Annotated[
        list[Path],
        typer.Argument(metavar="RUN", help="Run folders or their summary.json files"),
    ],
    plot: Annotated[Path, picture_option("--plot", "The picture to draw (.png, .svg, .pdf)")],
):
    """Draw runs' curves: dev BLEU by wall-clock minutes, training loss by steps."""
    from translator.plots.curves import draw_curves
    from translator.train.run_dir import summary_file

    typer.echo(draw_curves([(run, summary_file(run)) for run in runs], plot), err=True)
