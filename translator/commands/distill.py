"""`translator distill`: a teacher translates a config's training sources into a corpus a
student trains on (decode/distill.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from translator.cli_options import (
    BatchSizeOpt,
    BeamOpt,
    CkptOpt,
    DeviceOpt,
    EnsembleOpt,
    LenPenaltyOpt,
    QuantizeOpt,
    SetOpt,
    decode_overrides,
)
from translator.ranges import BEAM


def distill(
    checkpoint: CkptOpt,
    out: Annotated[
        Path,
        typer.Option("--out", metavar="DIR", help="Folder for the distilled corpus"),
    ],
    config: Annotated[
        Path | None,
        typer.Option(
            "--config",
            "-c",
            metavar="FILE",
            help="The config whose training data to translate (default: the teacher's own)",
        ),
    ] = None,
    set_: SetOpt = None,
    ensemble: EnsembleOpt = False,
    beam: BeamOpt = None,
    len_penalty: LenPenaltyOpt = None,
    batch_size: BatchSizeOpt = None,
    nbest: Annotated[
        int,
        typer.Option(
            "--nbest",
            min=BEAM[0],
            max=BEAM[1],
            metavar="K",
            help="Keep the best of the teacher's K best by sentence BLEU against the reference",
        ),
    ] = 1,
    device: DeviceOpt = "auto",
    quantize: QuantizeOpt = None,
):
    """Translate the training sources of a config with a teacher, for a student to train on.

    Writes DIR/train.SRC and DIR/train.TGT (with data.corpora, train0, train1, ...). A run
    that stops continues where it stopped when run again."""
    from translator.config import load_config
    from translator.decode.distill import distill_corpora
    from translator.decode.resumable import model_stamps
    from translator.engines.load import load_engine

    engine = load_engine(checkpoint, device, quantize, ensemble)
    if config is not None:
        cfg = load_config(config, set_ or [])
    else:
        from translator.config import config_from_dict

        cfg = config_from_dict(engine.cfg.to_dict(), overrides=set_ or [])
    dc = decode_overrides(engine.cfg.decode, beam, len_penalty, None, None, batch_size, nbest)
    done = distill_corpora(engine, cfg, out, dc, nbest, model_stamps(checkpoint))
    entries = ", ".join(d.entry() for d in done)
    typer.echo(
        f"distilled {sum(d.lines for d in done):,} lines into {out}; "
        f"train on them with data.corpora: [{entries}]"
    )
