"""`translator prepare`: the training data cleaned and tokenized ahead of training."""

from __future__ import annotations

import typer

from translator.cli_options import ConfigOpt, SetOpt


def prepare(config: ConfigOpt, set_: SetOpt = None):
    """Tokenize the training data into memory-mapped arrays (word-aligned if guided).

    train does this itself when the prepared data is missing or out of date."""
    from translator.config import load_config
    from translator.data.align import cached_alignments, guided
    from translator.data.corpora import prepare_corpora
    from translator.data.prepare import prepare as run_prepare

    cfg = load_config(config, set_ or [])
    aligning = guided(cfg)
    for data in (
        prepare_corpora(cfg, None, False) if cfg.data.training_corpora() else [run_prepare(cfg)]
    ):
        m = data.manifest
        typer.echo(
            f"{m['pairs']:,} training pairs of {m['counts']['read']:,} read, "
            f"{m['seconds']:.1f}s to prepare; in {data.folder}"
        )
        if aligning:
            links, _ = cached_alignments(data)
            typer.echo(f"{len(links):,} word alignment links; in {data.folder / 'align.json'}")
