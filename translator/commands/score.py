"""`translator score`: the log-probability a model gives each target of two aligned files."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated

import typer

from translator.cli_options import (
    BatchSizeOpt,
    CkptOpt,
    DeviceOpt,
    EnsembleOpt,
    QuantizeOpt,
    TagOpt,
    TgtLangOpt,
    input_option,
    output_option,
)

# Pairs read, scored and written at a time: a corpus of any size streams through.
CHUNK = 8192

SrcOpt = Annotated[Path, input_option("--src", "Source sentences, one a line")]
TgtOpt = Annotated[Path, input_option("--tgt", "Their translations, line by line")]


def score(
    checkpoint: CkptOpt,
    src: SrcOpt,
    tgt: TgtOpt,
    output_file: Annotated[
        Path | None, output_option("--output", "Write the scores here (default: standard output)")
    ] = None,
    as_json: Annotated[
        bool, typer.Option("--json", help="One JSON object a line instead of tab-separated")
    ] = False,
    ensemble: EnsembleOpt = False,
    batch_size: BatchSizeOpt = None,
    tag: TagOpt = None,
    tgt_lang: TgtLangOpt = None,
    device: DeviceOpt = "auto",
    quantize: QuantizeOpt = None,
    alignments: Annotated[
        bool,
        typer.Option(
            "--alignments",
            help='A column more: the target\'s word alignment to its source, "i-j ..." as the '
            "model reads it",
        ),
    ] = False,
):
    """Score aligned pairs: how likely the model finds each target given its source.

    One line per pair: logprob (summed over the target's subwords and its end), mean, tokens
    (and with --alignments, source word i - target word j pairs, from 0).

    The sum is what a search adds up for that output, before its length penalty."""
    from translator.data.pharaoh import pharaoh
    from translator.decode.request import DecodeRequest
    from translator.engines.load import load_engine
    from translator.fileio import atomic_open
    from translator.fileio.outputs import distinct_outputs

    inputs = {"--src": src, "--tgt": tgt, **checkpoints(checkpoint)}
    distinct_outputs({"--output": output_file}, inputs)
    engine = load_engine(checkpoint, device, quantize, ensemble, tag, tgt_lang)
    if alignments:
        engine.check_alignments(DecodeRequest(engine.cfg.decode, alignments=True))

    def write(out) -> None:
        for scores in stream_scores(engine, src, tgt, batch_size, alignments=alignments):
            for found in scores:
                aligned = "" if found.alignment is None else pharaoh(found.alignment)
                if as_json:
                    extra = {"alignment": aligned} if alignments else {}
                    out.write(json.dumps({**found.as_dict(), **extra}) + "\n")
                else:
                    row = f"{found.logprob:.6f}\t{found.mean:.6f}\t{found.tokens}"
                    out.write(row + (f"\t{aligned}\n" if alignments else "\n"))
            out.flush()

    if output_file is None:
        write(sys.stdout)
        return
    with atomic_open(output_file, "w", encoding="utf-8") as out:  # whole, or not at all
        write(out)


def checkpoints(checkpoint) -> dict:
    """--checkpoint as inputs that no output may be (one path, or several with --ensemble)."""
    paths = checkpoint if isinstance(checkpoint, list | tuple) else [checkpoint]
    return {f"--checkpoint {p}" if len(paths) > 1 else "--checkpoint": p for p in paths}


def stream_scores(
    engine,
    src: Path,
    tgt: Path,
    batch_size: int | None,
    progress: bool = True,
    source=None,
    alignments: bool = False,
):
    """The scores of two aligned files, a list per chunk of CHUNK pairs, in order; the files
    are read as they are scored (a bar counts the pairs on a terminal). With `source`, each
    target is scored given that text instead of its own source; with `alignments`, each
    score holds the target's word alignment."""
    from translator.data.readers import chunked, iter_pair_files
    from translator.decode.request import DecodeRequest
    from translator.progress import progress_bar

    dc = engine.cfg.decode
    request = DecodeRequest(
        dc.replace(batch_size=batch_size or dc.batch_size), alignments=alignments
    )
    with progress_bar(desc="score", unit="pair", enabled=progress) as bar:
        for chunk in chunked(iter_pair_files(src, tgt), CHUNK):
            sources = [s if source is None else source for s, _ in chunk]
            targets = [t for _, t in chunk]
            yield engine.score(sources, targets, request)
            bar.update(len(chunk))
