"""`translator eval`: a model scored on its test data or on files (sacreBLEU BLEU, chrF,
TER), by source length on request, with its translations written where asked."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from translator.cli_options import (
    BatchSizeOpt,
    BeamOpt,
    CkptOpt,
    ConstraintsOpt,
    DeviceOpt,
    EnsembleOpt,
    LenPenaltyOpt,
    MaxLenAOpt,
    MaxLenBOpt,
    QuantizeOpt,
    SrcLangOpt,
    TagOpt,
    TermsIgnoreCaseOpt,
    TermsOpt,
    TgtLangOpt,
    decode_overrides,
    input_option,
    output_option,
    picture_option,
)
from translator.errors import UserError

SplitOpt = Annotated[
    str, typer.Option("--split", metavar="SPLIT", help="dev or test of the model's data")
]
SrcOpt = Annotated[Path | None, input_option("--src", "Score this source file ...")]
RefOpt = Annotated[
    list[Path] | None,
    input_option("--ref", "... against this reference file (repeatable: several references)"),
]
OutputOpt = Annotated[Path | None, output_option("--output", "Write the translations to this file")]
AsJsonOpt = Annotated[bool, typer.Option("--json", help="Print one JSON object")]
ByLengthOpt = Annotated[bool, typer.Option("--by-length", help="BLEU per source-length bucket")]
PlotOpt = Annotated[
    Path | None, picture_option("--plot", "Draw BLEU by source length to this picture")
]
ConfidenceOpt = Annotated[
    bool,
    typer.Option(
        "--confidence",
        help="Also report how well confidence ranks the sentences (Spearman against sentence "
        "chrF) and finds the wrong words",
    ),
]
PlotConfidenceOpt = Annotated[
    Path | None,
    picture_option("--plot-confidence", "Draw confidence against sentence chrF to this picture"),
]
SetOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--set",
        metavar="KEY=VALUE",
        help="Override a data.* or decode.* key of the model's config, e.g. --set "
        "data.test.src=F (repeatable)",
    ),
]


def evaluate(
    checkpoint: CkptOpt,
    split: SplitOpt = "test",
    src: SrcOpt = None,
    ref: RefOpt = None,
    ensemble: EnsembleOpt = False,
    beam: BeamOpt = None,
    len_penalty: LenPenaltyOpt = None,
    max_len_a: MaxLenAOpt = None,
    max_len_b: MaxLenBOpt = None,
    batch_size: BatchSizeOpt = None,
    output: OutputOpt = None,
    as_json: AsJsonOpt = False,
    by_length: ByLengthOpt = False,
    plot: PlotOpt = None,
    confidence: ConfidenceOpt = False,
    plot_confidence: PlotConfidenceOpt = None,
    set_: SetOpt = None,
    constraint_file: ConstraintsOpt = None,
    terms: TermsOpt = None,
    terms_ignore_case: TermsIgnoreCaseOpt = False,
    tag: TagOpt = None,
    src_lang: SrcLangOpt = None,
    tgt_lang: TgtLangOpt = None,
    device: DeviceOpt = "auto",
    quantize: QuantizeOpt = None,
):
    """Score a model on its test data or on files: sacreBLEU BLEU, chrF and TER.

    Decodes the split (or --src, scored against --ref) with each --checkpoint, or with all
    of them as one model with --ensemble. --confidence adds how well the translations'
    confidence ranks them."""
    from translator.config import config_from_dict
    from translator.config.languages import scored_direction
    from translator.config.overrides import refuse_other_sections
    from translator.decode.evaluate import evaluate_translator
    from translator.decode.line_guides import LineGuides, Terms
    from translator.engines.load import load_engine
    from translator.fileio import atomic_write_bytes

    _check_options(split, src, ref, confidence, plot_confidence)
    refuse_other_sections(set_ or [], ("data", "decode"), "eval")
    glossary = Terms.option(terms, terms_ignore_case)
    guides = LineGuides(constraint_file=constraint_file, terms=glossary, terms_file=terms)
    from translator.fileio.outputs import distinct_outputs

    refs = {"--ref": ref[0]} if ref and len(ref) == 1 else {f"--ref {p}": p for p in ref or []}
    inputs = {"--src": src, **refs, "--constraints": constraint_file, "--terms": terms}
    checkpoints = {f"--checkpoint {p}": p for p in checkpoint}
    written = {"--output": output, "--plot": plot, "--plot-confidence": plot_confidence}
    distinct_outputs(written, {**inputs, **checkpoints})
    models = [checkpoint] if ensemble else [[path] for path in checkpoint]
    if output is not None and len(models) > 1:
        raise UserError("--output takes one --checkpoint (or --ensemble); give one model at a time")
    series, scattered = [], []
    for paths in models:
        path = " + ".join(map(str, paths))
        translator = load_engine(paths, device, quantize, ensemble, tag, tgt_lang, False, src_lang)
        cfg = translator.cfg
        if set_:  # --set applies to the data and the decoding settings alike
            cfg = config_from_dict(cfg.to_dict(), f"{path} (saved config)", set_)
        cfg = cfg.replace(data=scored_direction(cfg.data, src_lang, tgt_lang))
        dc = decode_overrides(cfg.decode, beam, len_penalty, max_len_a, max_len_b, batch_size)
        files, lengths = (src, ref), by_length or plot is not None
        points = [] if confidence else None
        result, hyps = evaluate_translator(
            translator, cfg.data, cfg.seed, dc, split, files, lengths, guides, written, points
        )
        result["checkpoint"] = path
        result["direction"] = f"{cfg.data.src_lang}-{cfg.data.tgt_lang}"
        series.append((translator.cfg.model.type, paths, result.get("by_length", [])))
        if confidence:
            scattered.append((translator.cfg.model.type, paths, result["confidence"], points))
        if output is not None:
            atomic_write_bytes(output, "".join(h + "\n" for h in hyps).encode("utf-8"))
        _show(result, as_json, path if len(models) > 1 else None, by_length)
    _draw(plot, series, plot_confidence, scattered)


def _check_options(split: str, src, ref, confidence: bool, plot_confidence) -> None:
    """Refuse options that do not go together; find a missing matplotlib for
    --plot-confidence before the test set is translated rather than after."""
    from translator.errors import optional_import

    if split not in ("dev", "test"):
        raise UserError(f"--split must be dev or test, got '{split}'")
    if (src is None) != (ref is None):
        raise UserError("--src and --ref go together: give both files or neither")
    if plot_confidence is None:
        return
    if not confidence:
        raise UserError("--plot-confidence draws what --confidence measures: add --confidence")
    optional_import("matplotlib", "plot", "plots")


def _show(result: dict, as_json: bool, heading: str | None, by_length: bool) -> None:
    """One model's result: a JSON line, or the text report under `heading` where given."""
    from translator.decode.evaluate import report_lines

    if as_json:
        typer.echo(json.dumps(result, ensure_ascii=False))
        return
    if heading is not None:
        typer.echo(f"== {heading}")
    typer.echo("\n".join(report_lines(result, by_length)))


def _draw(plot, series: list, plot_confidence, scattered: list) -> None:
    """The pictures asked for: BLEU by source length, confidence against sentence chrF."""
    from translator.plots.confidence import plot_confidence as draw_confidence
    from translator.plots.figures import plot_by_length

    if plot is not None:
        plot_by_length(series, str(plot))
        typer.echo(f"plot written to {plot}", err=True)
    if plot_confidence is not None:
        draw_confidence(scattered, str(plot_confidence))
        typer.echo(f"plot written to {plot_confidence}", err=True)
