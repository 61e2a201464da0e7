"""`translator calibrate`: fit how a checkpoint's confidence is computed (decode/confidence.py)
on its dev split or on given files, and store it in the checkpoint."""

from __future__ import annotations

import contextlib
import json
import os
from pathlib import Path
from typing import Annotated

import typer

from translator.cli_options import (
    BatchSizeOpt,
    BeamOpt,
    DeviceOpt,
    EnsembleOpt,
    LenPenaltyOpt,
    checkpoint_option,
    decode_overrides,
    input_option,
)


def calibrate(
    checkpoint: Annotated[
        list[Path],
        checkpoint_option("The checkpoint file to calibrate (repeatable, with --ensemble)", "CKPT"),
    ],
    src: Annotated[Path | None, input_option("--src", "Fit on this source file ...")] = None,
    ref: Annotated[Path | None, input_option("--ref", "... and its references")] = None,
    beam: BeamOpt = None,
    len_penalty: LenPenaltyOpt = None,
    batch_size: BatchSizeOpt = None,
    ensemble: EnsembleOpt = False,
    device: DeviceOpt = "auto",
    as_json: Annotated[bool, typer.Option("--json", help="Print the report as JSON")] = False,
):
    """Fit a checkpoint's confidence on its dev split (or --src, --ref) and store it there.

    Confidence then predicts each translation's sentence chrF under the decoding settings
    fitted with (translate --confidence, the server's "confidence"). The checkpoint is
    rewritten whole or not at all. With --ensemble it fits the ensemble of the --checkpoint
    models and keeps that calibration in the first, for exactly those members."""
    from translator.errors import UserError

    if (src is None) != (ref is None):
        raise UserError("--src and --ref go together: give both files or neither")
    first = checkpoint[0]
    for path in checkpoint:
        if path.is_dir():
            raise UserError(f"{path}: calibrate a checkpoint file; its exports carry it along")
    with _no_training(first.parent):
        _fit_and_store(checkpoint, src, ref, beam, len_penalty, batch_size, ensemble, device,
                       as_json)  # fmt: skip


@contextlib.contextmanager
def _no_training(folder: Path):
    """The lock a training run holds on its folder, held while calibrating a checkpoint
    there: a run replacing best.pt meanwhile would get the old weights back with a
    calibration fitted on them."""
    from translator.errors import UserError
    from translator.fileio import Busy, locked

    try:
        fd = locked(folder)
    except Busy:
        raise UserError(
            f"{folder} is in use by a training run, which may replace the checkpoint",
            "calibrate once it stops",
        ) from None
    try:
        yield
    finally:
        if fd is not None:
            os.close(fd)


def _fit_and_store(checkpoint, src, ref, beam, len_penalty, batch_size, ensemble, device,
                   as_json) -> None:  # fmt: skip
    from translator.data.corpus import load_split, read_pair_files
    from translator.decode.calibrate import fit
    from translator.engines.load import load_engine
    from translator.models.checkpoint import Checkpoint, members_key

    first = checkpoint[0]
    engine = load_engine(checkpoint, device, ensemble=ensemble)
    dc = decode_overrides(engine.cfg.decode, beam, len_penalty, None, None, batch_size)
    if src is not None:
        pairs = read_pair_files(src, ref)
    else:
        pairs = load_split(engine.cfg.data, "dev", engine.cfg.seed)
    cal, report = fit(
        engine, [s for s, _ in pairs], [t for _, t in pairs], engine.request(decode=dc)
    )
    saved = Checkpoint.load(first)
    if len(checkpoint) > 1:
        key = members_key([saved.model, *(Checkpoint.load(p).model for p in checkpoint[1:])])
        saved.ensemble_calibrations = {**(saved.ensemble_calibrations or {}), key: cal.to_dict()}
        what = f"the ensemble of {' + '.join(map(str, checkpoint))} (kept in {first})"
    else:
        saved.calibration = cal.to_dict()
        what = str(first)
    saved.save(first)
    if as_json:
        typer.echo(json.dumps(report))
        return
    typer.echo(
        f"calibrated {what} on {report['sentences']:,} sentences: Spearman "
        f"{report['spearman']:.3f} against sentence chrF (mean log-probability alone: "
        f"{report['spearman_mean_logprob']:.3f}), doubtful words under "
        f"{report['word_threshold']:.2f} (F1 of wrong words {report['word_bad_f1']:.3f})"
    )
