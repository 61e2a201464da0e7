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
from translator.config.ranges import BEAM
from translator.errors import UserError
from translator.fileio.outputs import claim_folder, refuse_edited
from translator.fileio.recognise import earlier_distill


def _training_files(cfg) -> list[Path]:
    """The files and folders the config's training data is read from."""
    d = cfg.data
    places = [d.train, d.dir, *((c.train, c.dir) for c in d.training_corpora() or [])]
    flat = []
    for place in places:
        for item in place if isinstance(place, tuple) else (place,):
            if isinstance(item, str):
                flat.append(Path(item))
            elif item is not None:
                flat += [Path(item.src), Path(item.tgt)]
    return flat


def _check_out(out: Path, cfg) -> tuple[set[str], set[str], set[str]]:
    """--out is a folder distill may write: none of the training data is read from it, the
    data can be opened (else nothing is made), and no file this run may replace was edited
    since translator wrote it. (The names translator wrote there, the names this run may
    write, the corpus files among them that people read and edit.)"""
    from translator.data.corpora import training_sources
    from translator.decode.distill import corpus_files, written_files

    names = [name for name, _ in training_sources(cfg)]
    for path in _training_files(cfg):
        inside = path.resolve() if path.is_dir() else path.resolve().parent
        if inside == out.resolve():
            raise UserError(
                f"--out {out} holds the training data distill reads ({path}); writing there "
                "would replace it",
                "give --out a folder of its own",
            )
    ours = claim_folder(out, "--out", earlier_distill, "distill")
    planned, corpora = set(), set()
    for name in names:  # what this run writes, replacing only its own
        src, ref, tgt, *_ = corpus_files(out, name, cfg.data.src_lang, cfg.data.tgt_lang)
        corpora |= {src.name, ref.name, tgt.name}
        for path in written_files(out, name, cfg.data.src_lang, cfg.data.tgt_lang):
            if path.exists() and path.name not in ours:
                raise UserError(
                    f"{path} was not written by translator; refusing to replace it",
                    "move it away or give another folder",
                )
            planned.add(path.name)
    # an edited file is neither "already distilled" (it no longer lines up) nor replaced
    refuse_edited(out, planned)
    return ours, planned, corpora


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
    from translator.config.languages import target_languages
    from translator.config.overrides import refuse_other_sections
    from translator.decode.distill import distill_corpora
    from translator.decode.resumable import model_stamps
    from translator.engines.load import load_engine
    from translator.fileio.outputs import record

    # (only the training data is read from the config; the teacher decodes by its options)
    hint = "the teacher decodes as its own decode section and --beam, --len-penalty say"
    refuse_other_sections(set_ or [], ("data",), "distill", hint)
    engine = load_engine(checkpoint, device, quantize, ensemble, any_language=True)
    if len(targets := target_languages(engine.cfg.data)) > 1:
        raise UserError(
            f"distill takes a teacher of one target language; {checkpoint[0]} translates "
            f"into several ({', '.join(targets)})"
        )
    if config is not None:
        cfg = load_config(config, set_ or [])
    else:
        from translator.config import config_from_dict

        cfg = config_from_dict(engine.cfg.to_dict(), overrides=set_ or [])
    dc = decode_overrides(engine.cfg.decode, beam, len_penalty, None, None, batch_size, nbest)
    ours, planned, corpora = _check_out(out, cfg)
    before = {p.name for p in out.iterdir()} - ours
    # listed before any is made: a run killed outright (SIGKILL) leaves them translator's;
    # unstamped while rewritten, so that such a run leaves no stamp its own files break
    record(out, planned, "distill", forget=corpora)
    try:
        done = distill_corpora(engine, cfg, out, dc, nbest, model_stamps(checkpoint))
    finally:  # what a stopped run wrote is translator's too, for the next run to go on
        new = {p.name for p in out.iterdir()} - before
        record(out, new, "distill", stamp=corpora)
    entries = ", ".join(d.entry() for d in done)
    typer.echo(
        f"distilled {sum(d.lines for d in done):,} lines into {out}; "
        f"train on them with data.corpora: [{entries}]"
    )
