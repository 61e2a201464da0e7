"""`translator train` and `translator average`: a run from a config, and the mean of
checkpoints' weights."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from translator.cli_options import ConfigOpt, SetOpt, checkpoint_option, output_option


def train(
    config: ConfigOpt,
    set_: SetOpt = None,
    resume: Annotated[bool, typer.Option("--resume", help="Continue from RUN/last.pt")] = False,
    init_from: Annotated[
        Path | None,
        typer.Option(
            "--init-from", metavar="FILE", help="Fine-tune: start from this checkpoint's weights"
        ),
    ] = None,
    overwrite: Annotated[
        bool, typer.Option("--overwrite", help="Replace an earlier run's checkpoints in RUN")
    ] = False,
):
    """Train a model as a config says, into the run folder it names.

    RUN, the config's run_dir, gets best.pt, last.pt, summary.json, train.log and
    validations.jsonl."""
    from translator.config import load_config

    cfg = load_config(config, set_ or [])  # (a mistake in it is named before torch loads)
    from translator.train.trainer import Trainer

    trainer = Trainer(cfg, resume=resume, init_from=init_from, overwrite=overwrite)
    finished = False
    try:
        trainer.run()
        finished = True
    finally:
        trainer.close(finished)
    summary = trainer.summary
    best = (
        f"best dev BLEU {summary['best_dev_bleu']:.2f} at step {summary['best_step']}"
        if summary["best_step"]
        else "no validation yet"
    )
    typer.echo(
        f"{summary['stop_reason']}; {best}; "
        f"{summary['target_tokens_per_second']:,} target tokens/s; checkpoints in {cfg.run_dir}"
    )


def average(
    run_dir: Annotated[
        Path | None, typer.Argument(metavar="RUN", help="A run folder: its step-*.pt")
    ] = None,
    last: Annotated[
        int | None, typer.Option("--last", min=1, metavar="N", help="Only the newest N")
    ] = None,
    checkpoint: Annotated[
        list[Path] | None,
        checkpoint_option("A checkpoint to average (repeatable)", "FILE"),
    ] = None,
    output: Annotated[
        Path | None,
        output_option(
            "--output", "The checkpoint to write (default RUN/average.pt)", checkpoint=True
        ),
    ] = None,
):
    """Average the weights of a run's step checkpoints (or of --checkpoint files)."""
    from translator.train.averaging import average_command

    typer.echo(average_command(run_dir, last, checkpoint or [], output))
