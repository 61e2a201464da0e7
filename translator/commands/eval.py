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
SignificanceOpt = Annotated[
    str | None,
    typer.Option(
        "--significance",
        metavar="TEST",
        help="With two or more --checkpoint: test each model's BLEU, chrF and TER against the "
        "first's (the baseline), bs: paired bootstrap resampling (with 95% confidence "
        "intervals), ar: paired approximate randomization (sacreBLEU's)",
    ),
]
SamplesOpt = Annotated[
    int | None,
    typer.Option(
        "--significance-samples",
        metavar="N",
        help="Resamples (bs) or trials (ar) of --significance; sacreBLEU's default: 1000 for "
        "bs, 10000 for ar",
    ),
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
    significance: SignificanceOpt = None,
    significance_samples: SamplesOpt = None,
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
    confidence ranks them. --significance tests each model against the first."""
    from translator.config import config_from_dict
    from translator.config.languages import scored_direction
    from translator.config.overrides import refuse_other_sections
    from translator.decode.evaluate import evaluate_translator
    from translator.decode.line_guides import LineGuides, Terms
    from translator.engines.load import load_engine
    from translator.fileio import atomic_write_bytes

    _check_options(split, src, ref, confidence, plot_confidence)
    _check_significance(significance, significance_samples, checkpoint, ensemble)
    refuse_other_sections(set_ or [], ("data", "decode"), "eval")
    glossary = Terms.option(terms, terms_ignore_case)
    guides = LineGuides(constraint_file=constraint_file, terms=glossary, terms_file=terms)
    written = {"--output": output, "--plot": plot, "--plot-confidence": plot_confidence}
    guide_files = {"--constraints": constraint_file, "--terms": terms}
    _check_files(checkpoint, ensemble, src, ref, guide_files, written)
    models = [checkpoint] if ensemble else [[path] for path in checkpoint]
    series, scattered, systems = [], [], []
    for paths in models:
        path = " + ".join(map(str, paths))
        translator = load_engine(paths, device, quantize, ensemble, tag, tgt_lang, False, src_lang)
        cfg = translator.cfg
        if set_:  # --set applies to the data and the decoding settings alike
            cfg = config_from_dict(cfg.to_dict(), f"{path} (saved config)", set_)
        cfg = cfg.replace(data=scored_direction(cfg.data, src_lang, tgt_lang))
        dc = decode_overrides(cfg.decode, beam, len_penalty, max_len_a, max_len_b, batch_size)
        files, lengths = (src, ref), by_length or plot is not None
        points, refs = [] if confidence else None, []
        result, hyps = evaluate_translator(
            translator, cfg.data, cfg.seed, dc, split, files, lengths, guides, written, points, refs
        )
        systems.append((path, hyps, refs, result))
        result["checkpoint"] = path
        result["direction"] = f"{cfg.data.src_lang}-{cfg.data.tgt_lang}"
        series.append((translator.cfg.model.type, paths, result.get("by_length", [])))
        if confidence:
            scattered.append((translator.cfg.model.type, paths, result["confidence"], points))
        if output is not None:
            atomic_write_bytes(output, "".join(h + "\n" for h in hyps).encode("utf-8"))
        if not (as_json and significance):  # a JSON line waits for its test's figures
            _show(result, as_json, path if len(models) > 1 else None, by_length)
    if significance:
        _significance(systems, significance, significance_samples, as_json)
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


def _check_significance(test: str | None, samples: int | None, checkpoints, ensemble) -> None:
    """Refuse a --significance that has nothing to compare, before any model decodes."""
    if test is None:
        if samples is not None:
            raise UserError("--significance-samples goes with --significance: add bs or ar")
        return
    if test not in ("bs", "ar"):
        raise UserError(f"--significance must be bs or ar, got '{test}'")
    if ensemble:
        raise UserError("--significance compares separate models; --ensemble decodes them as one")
    if len(checkpoints) < 2:
        raise UserError("--significance compares models: give two or more --checkpoint")
    if samples is not None and samples < 1:
        raise UserError(f"--significance-samples must be at least 1, got {samples}")


def _check_files(checkpoints: list, ensemble: bool, src, ref, guides: dict, written: dict):
    """Refuse an output file (option -> path in `written`) that names an input file, and an
    --output that several models would write."""
    from translator.fileio.outputs import distinct_outputs

    refs = {"--ref": ref[0]} if ref and len(ref) == 1 else {f"--ref {p}": p for p in ref or []}
    models = {f"--checkpoint {p}": p for p in checkpoints}
    distinct_outputs(written, {"--src": src, **refs, **guides, **models})
    if written["--output"] is not None and len(checkpoints) > 1 and not ensemble:
        raise UserError("--output takes one --checkpoint (or --ensemble); give one model at a time")


def _significance(systems: list, test: str, samples: int | None, as_json: bool) -> None:
    """The paired tests of each model against the first, shown after the scores: as text,
    or in each model's JSON line under "significance". `systems`: (checkpoint, translations,
    references, result) of each model."""
    from translator.decode.significance import paired_tests, report_lines

    base_path, _, base_refs, base = systems[0]
    for path, _, refs, result in systems[1:]:
        if refs != base_refs:  # the checkpoints' configs may name different test data
            raise UserError(
                f"--significance compares translations of the same sentences: {path} was "
                f"scored on {result['data']}, {base_path} on {base['data']}"
            )
    tables = paired_tests([(path, hyps) for path, hyps, _, _ in systems], base_refs, test, samples)
    if not as_json:
        typer.echo("\n".join(report_lines(tables, [path for path, *_ in systems])))
        return
    for (*_, result), table in zip(systems, tables):
        _show({**result, "significance": table}, True, None, False)


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
