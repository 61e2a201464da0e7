"""`translator filter`: keep the pairs a model (or two) finds most likely to be translations.

With one model a pair's score is exp(mean log-probability of the target given the source),
the geometric mean of its subwords' probabilities. With a model of the reverse direction as
well it is dual conditional cross-entropy (Junczys-Dowmunt 2018): with H_f and H_r the
per-subword cross-entropies of the target given the source and of the source given the
target, exp(-(|H_f - H_r| + (H_f + H_r) / 2)): a pair goes when either model finds it
unlikely or the two disagree. Both scores lie in (0, 1]; higher is better.

With --contrast the one model's score is how much its source makes the target likelier:
the mean log-probability of the target given its source minus that given a source that
says nothing (NEUTRAL), which is the model's guess of a target on its own. A fluent,
common target scores high on the first measure whatever its source; on this one a target
scores high only where its own source explains it, as a translation's does (the idea of
cross-entropy difference, Moore & Lewis 2010, with the model standing in for the language
model). This score is a log-ratio per subword, any real number; higher is better.
"""

from __future__ import annotations

import math
from array import array
from itertools import repeat
from pathlib import Path
from typing import Annotated

import typer

from translator.cli_options import (
    BatchSizeOpt,
    CkptOpt,
    DeviceOpt,
    EnsembleOpt,
    TgtLangOpt,
    finite,
    input_option,
    output_option,
)
from translator.commands.score import SrcOpt, TgtOpt, checkpoints, stream_scores
from translator.errors import UserError

NEUTRAL = "."  # a source that says nothing about its target


def pair_score(forward_mean: float, reverse_mean: float | None) -> float:
    """One pair's score from the mean log-probabilities of one or two models."""
    if reverse_mean is None:
        return math.exp(forward_mean)
    h_f, h_r = -forward_mean, -reverse_mean
    return math.exp(-(abs(h_f - h_r) + 0.5 * (h_f + h_r)))


def kept(scores: list[float], keep: float | None, min_score: float | None) -> list[bool]:
    """Which pairs stay: the best `keep` share (ties kept in file order), or those scoring
    at least `min_score`."""
    if min_score is not None:
        return [s >= min_score for s in scores]
    import numpy as np

    n = math.floor(len(scores) * keep + 0.5)  # (half up: 0.45 of 10 pairs keeps 5)
    out = np.zeros(len(scores), bool)  # a stable sort keeps ties in file order
    out[np.argsort(np.negative(np.asarray(scores, np.float64)), kind="stable")[:n]] = True
    return out.tolist()


OutSrcOpt = Annotated[Path, output_option("--out-src", "Write the kept sources here")]
OutTgtOpt = Annotated[Path, output_option("--out-tgt", "Write the kept targets here")]
ReverseOpt = Annotated[
    Path | None,
    input_option("--reverse", "A model of the other direction: dual conditional filtering"),
]
KeepOpt = Annotated[
    float | None,
    typer.Option(
        "--keep", metavar="SHARE", help="Keep this best share (0 to 1)", parser=finite(0.0, 1.0)
    ),
]
MinScoreOpt = Annotated[
    float | None,
    typer.Option(
        "--min-score",
        metavar="S",
        help="Keep pairs scoring at least S (0 to 1; with --contrast a log-ratio, 0: no gain)",
        parser=finite(),
    ),
]
ScoresFileOpt = Annotated[
    Path | None, output_option("--scores", "Write every pair's score here, one a line")
]
ContrastOpt = Annotated[
    bool,
    typer.Option("--contrast", help="Score by how much likelier the source makes the target"),
]


def filter_pairs(
    checkpoint: CkptOpt,
    src: SrcOpt,
    tgt: TgtOpt,
    out_src: OutSrcOpt,
    out_tgt: OutTgtOpt,
    reverse: ReverseOpt = None,
    keep: KeepOpt = None,
    min_score: MinScoreOpt = None,
    scores_file: ScoresFileOpt = None,
    contrast: ContrastOpt = False,
    ensemble: EnsembleOpt = False,
    batch_size: BatchSizeOpt = None,
    tgt_lang: TgtLangOpt = None,
    device: DeviceOpt = "auto",
):
    """Keep the pairs a model finds likeliest; with --reverse, dual conditional filtering.

    Give --keep SHARE or --min-score S. A pair scores exp(its target's mean log-probability).

    With --reverse: exp(-(|Hf - Hr| + (Hf + Hr) / 2)), Hf and Hr each model's cross-entropy."""
    from translator.data.readers import iter_pair_files
    from translator.engines.load import load_engine
    from translator.fileio import atomic_files
    from translator.fileio.outputs import distinct_outputs

    if (keep is None) == (min_score is None):
        raise UserError("give either --keep SHARE (for example 0.9) or --min-score S")
    distinct_outputs(
        {"--out-src": out_src, "--out-tgt": out_tgt, "--scores": scores_file},
        {"--src": src, "--tgt": tgt, **checkpoints(checkpoint), "--reverse": reverse},
    )
    if contrast and reverse is not None:
        raise UserError("--contrast scores with one model: give it or --reverse, not both")
    if min_score is not None and not contrast and not 0 <= min_score <= 1:
        raise UserError(
            f"--min-score {min_score}: scores run from 0 to 1, so it would keep "
            + ("no pair" if min_score > 1 else "every pair"),
            "with --contrast a score is a log-ratio, of any sign",
        )
    if tgt_lang is not None and reverse is not None:
        raise UserError("--reverse takes two models of one direction each: give it or "
                        "--tgt-lang (of a model of several target languages), not both")  # fmt: skip
    forward = load_engine(checkpoint, device, ensemble=ensemble, tgt_lang=tgt_lang)
    backward_engine = None if reverse is None else load_engine(reverse, device)
    if backward_engine is not None:  # (checked before any scoring)
        langs = forward.cfg.data.src_lang, forward.cfg.data.tgt_lang
        theirs = backward_engine.cfg.data.src_lang, backward_engine.cfg.data.tgt_lang
        if theirs != langs[::-1]:
            raise UserError(
                f"--reverse {reverse} translates {theirs[0]}->{theirs[1]}; dual conditional "
                f"filtering needs {langs[1]}->{langs[0]}, the other way from --checkpoint"
            )
    # Scores as C doubles (8 bytes a pair, not a list's 30 or more): --keep ranks them all.
    means = array("d", (s.mean for chunk in stream_scores(forward, src, tgt, batch_size)
                        for s in chunk))  # fmt: skip
    if contrast:
        alone = stream_scores(forward, src, tgt, batch_size, source=NEUTRAL)
        means = array("d", (m - s.mean for m, s in zip(means, (s for c in alone for s in c))))
    backward = repeat(None, len(means))
    if backward_engine is not None:
        chunks = stream_scores(backward_engine, tgt, src, batch_size)
        backward = array("d", (s.mean for chunk in chunks for s in chunk))
    scores = means if contrast else array("d", map(pair_score, means, backward))
    stays = kept(scores, keep, min_score)
    # All outputs or none: a failed write or rename, or Ctrl-C, changes none of them.
    specs = [(path, "w", "utf-8") for path in (out_src, out_tgt, scores_file)]
    with atomic_files(*specs) as (s_out, t_out, out):
        for (s, t), stay in zip(iter_pair_files(src, tgt), stays):
            if stay:
                s_out.write(s + "\n")
                t_out.write(t + "\n")
        if out is not None:
            out.writelines(f"{s!r}\n" for s in scores)  # (exact: as --min-score reads it)
    n = sum(stays)
    typer.echo(f"kept {n} of {len(scores)} pairs in {out_src} and {out_tgt}", err=True)
    if not n and scores:
        option = f"--keep {keep}" if min_score is None else f"--min-score {min_score}"
        typer.echo(f"warning: {option} kept no pair: the files are empty", err=True)
