"""`translator translate`: sentences from arguments, standard input or a file, with the
search's settings, sampling, target prefixes, required phrases and terms, a source tag
or an attention picture."""

from __future__ import annotations

import sys
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
    TagOpt,
    TermsIgnoreCaseOpt,
    TermsOpt,
    TgtLangOpt,
    decode_overrides,
    input_option,
    number_option,
    output_option,
    picture_option,
)
from translator.config.ranges import BEAM, SEED, TEMPERATURE
from translator.errors import UserError

TextOpt = Annotated[
    list[str] | None,
    typer.Argument(metavar="TEXT", help="Sentences to translate; none: standard input"),
]
SrcLangOpt = Annotated[
    str | None,
    typer.Option(
        "--src-lang",
        metavar="LANG",
        help="The language of the input, for a model of language codes (NLLB: deu_Latn)",
    ),
]
InputFileOpt = Annotated[
    Path | None, input_option("--input", "Translate this file (one sentence a line)")
]
OutputFileOpt = Annotated[
    Path | None, output_option("--output", "Write the translations of --input to this file")
]
NbestOpt = Annotated[int, number_option("--nbest", "K", "Print K lines per input", BEAM)]
SamplingOpt = Annotated[
    str | None,
    typer.Option("--sampling", metavar="topk:K|topp:P", help="Sample instead of searching"),
]
TemperatureOpt = Annotated[
    float | None,
    number_option("--temperature", "T", "Sampling temperature (default 1.0)", TEMPERATURE),
]
SeedOpt = Annotated[int | None, number_option("--seed", "N", "Seed of the sampling", SEED)]
InteractiveOpt = Annotated[
    bool, typer.Option("--interactive", help="A prompt loop for typing sentences")
]
PlotAttentionOpt = Annotated[
    Path | None,
    picture_option("--plot-attention", "Draw the attention of the one TEXT to this picture"),
]
LayerOpt = Annotated[
    int,
    typer.Option("--layer", metavar="N", help="Transformer decoder layer to draw (-1: last)"),
]
PrefixOpt = Annotated[
    str | None,
    typer.Option("--prefix", metavar="TEXT", help="Every translation begins with TEXT"),
]
PrefixFileOpt = Annotated[
    Path | None,
    input_option("--prefixes", "Per line of --input, the text its translation begins with"),
]
FormatOpt = Annotated[
    str | None,
    typer.Option(
        "--format",
        metavar="text|html|markdown|docx",
        help="Translate --input as a document of paragraphs (default: from its extension, "
        ".html .md .docx; others one sentence a line)",
    ),
]
AlignmentsOpt = Annotated[
    bool,
    typer.Option(
        "--alignments",
        help='After each translation a TAB and its word alignment, "i-j ..." (source word i, '
        "translated word j, from 0)",
    ),
]
ConfidenceOpt = Annotated[
    bool,
    typer.Option(
        "--confidence",
        help="After each translation a TAB and its confidence: predicted chrF / 100 "
        "(translator calibrate), else exp(mean token log-probability)",
    ),
]
MinConfidenceOpt = Annotated[
    float | None,
    number_option(
        "--min-confidence",
        "X",
        'After the confidence column a TAB and "doubtful" where it is under X, else "ok" '
        "(implies --confidence; needs translator calibrate)",
        (0.0, 1.0),
    ),
]
ConstraintOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--constraint", metavar="PHRASE", help="Every translation holds PHRASE (repeatable)"
    ),
]


def translate(
    checkpoint: CkptOpt,
    text: TextOpt = None,
    input_file: InputFileOpt = None,
    output_file: OutputFileOpt = None,
    ensemble: EnsembleOpt = False,
    beam: BeamOpt = None,
    len_penalty: LenPenaltyOpt = None,
    max_len_a: MaxLenAOpt = None,
    max_len_b: MaxLenBOpt = None,
    batch_size: BatchSizeOpt = None,
    nbest: NbestOpt = 1,
    sampling: SamplingOpt = None,
    temperature: TemperatureOpt = None,
    seed: SeedOpt = None,
    interactive: InteractiveOpt = False,
    plot_attention: PlotAttentionOpt = None,
    layer: LayerOpt = -1,
    prefix: PrefixOpt = None,
    prefix_file: PrefixFileOpt = None,
    constraint: ConstraintOpt = None,
    constraint_file: ConstraintsOpt = None,
    terms: TermsOpt = None,
    terms_ignore_case: TermsIgnoreCaseOpt = False,
    tag: TagOpt = None,
    tgt_lang: TgtLangOpt = None,
    src_lang: SrcLangOpt = None,
    device: DeviceOpt = "auto",
    quantize: QuantizeOpt = None,
    doc_format: FormatOpt = None,
    alignments: AlignmentsOpt = False,
    confidence: ConfidenceOpt = False,
    min_confidence: MinConfidenceOpt = None,
):
    """Translate arguments, standard input or a file, line by line or as a document.

    --checkpoint takes a checkpoint file or a folder written by `translator export`."""
    from translator.decode.sampling import sampling_options
    from translator.decode.translate_io import draw_attention, interactive_loop, utf8_arguments
    from translator.fileio.outputs import distinct_outputs

    text = utf8_arguments(text or [])
    _check_sources(text, input_file, output_file, interactive, nbest)
    guides = _line_guides(prefix, prefix_file, constraint, constraint_file, terms,
                          terms_ignore_case)  # fmt: skip
    guides.check(input_file)
    fmt = _document_format(input_file, output_file, doc_format, nbest, guides)
    distinct_outputs(
        {"--output": output_file, "--plot-attention": plot_attention},
        {"--input": input_file, "--prefixes": prefix_file, "--constraints": constraint_file,
         "--terms": terms, **{f"--checkpoint {p}": p for p in checkpoint}},
    )  # fmt: skip
    sampler = sampling_options(sampling, temperature, seed, beam)
    if sampler is not None and checkpoint[0].is_dir():
        raise UserError(f"--sampling: {checkpoint[0]} is an exported model, which only searches")
    from translator.engines.load import load_engine  # (torch: after the quick checks)

    languages = {"tag": tag, "tgt_lang": tgt_lang, "src_lang": src_lang}
    translator = load_engine(checkpoint, device, quantize, ensemble, **languages)
    dc = decode_overrides(
        translator.cfg.decode, beam, len_penalty, max_len_a, max_len_b, batch_size, nbest
    )
    columns = {"min_confidence": min_confidence, "alignments": alignments,
               "confidence": confidence or min_confidence is not None}  # fmt: skip
    request = _request(dc, nbest, sampler, columns, (plot_attention, interactive, fmt), guides)
    _check_calibrated(translator, request, checkpoint)
    if plot_attention is not None:
        return draw_attention(translator, text, request, plot_attention, layer)
    if interactive:
        return interactive_loop(translator, request)
    if fmt is not None:
        from translator.commands.translate_document import translate_document_file

        translate_document_file(
            translator, request, fmt, input_file, output_file, checkpoint, src_lang, tgt_lang
        )
        return
    _write(translator, request, text, input_file, output_file, guides, checkpoint)


def _document_format(input_file, output_file, asked, nbest, guides) -> str | None:
    """The document format --input is read as (None: one sentence a line), checked with
    the other options before a model is loaded."""
    from translator.commands.translate_document import check_document_options
    from translator.documents import format_of

    fmt = format_of(input_file, asked)
    if fmt is not None:
        check_document_options(fmt, input_file, output_file, nbest, guides)
    return fmt


def _check_sources(text, input_file, output_file, interactive: bool, nbest: int) -> None:
    """Where the lines come from and go, checked before any model is read."""
    if interactive and (text or input_file is not None or nbest > 1):
        what = "TEXT" if text else "--input" if input_file is not None else "--nbest"
        raise UserError(f"--interactive reads typed sentences and prints one translation "
                        f"each: give it or {what}, not both")  # fmt: skip
    if text and input_file is not None:
        raise UserError("give TEXT arguments or --input F, not both: the sentences come from "
                        "one place")  # fmt: skip
    if output_file is not None and input_file is None:
        raise UserError("--output needs --input F (arguments and stdin go to standard output)")


def _request(dc, nbest: int, sampler, columns: dict, elsewhere: tuple, guides):
    """The DecodeRequest of the options. --alignments and --confidence are columns after
    each line: not for `elsewhere`, the attention picture, the prompt or a document format,
    where given; nor are `guides` (prefixes, phrases) for the picture or the prompt."""
    from translator.decode.request import DecodeRequest

    if guides and (elsewhere[0] is not None or elsewhere[1]):
        raise UserError(
            "--prefix, --constraint and --terms go with TEXT, standard input or --input"
        )

    plot, interactive, fmt = elsewhere
    other = "--plot-attention" if plot is not None else "--interactive" if interactive else (
        f"translating a document ({fmt})" if fmt is not None else None)  # fmt: skip
    for name, asked in columns.items():
        if asked not in (None, False) and other is not None:
            option = "--" + name.replace("_", "-")
            raise UserError(f"{option} adds a column to lines, which {other} does not write: "
                            "give one or the other")  # fmt: skip
    if plot is not None and nbest > 1:
        raise UserError("--plot-attention draws the best translation's attention: give it or "
                        "--nbest, not both")  # fmt: skip
    return DecodeRequest(dc, nbest, sampler, **columns)


def _check_calibrated(translator, request, checkpoint: list[Path]) -> None:
    """A one-line error where the request has a min_confidence and `translator` no
    calibration: a raw exp(mean log-probability) is no predicted chrF to hold against it."""
    if request.min_confidence is not None and getattr(translator, "calibration", None) is None:
        if len(checkpoint) > 1:
            raise UserError(
                "--min-confidence: this ensemble has no calibration; run `translator calibrate` "
                "with the same --checkpoint options and --ensemble, or use --confidence for "
                "raw scores"
            )
        again = " and export it again" if checkpoint[0].is_dir() else ""
        raise UserError(
            f"--min-confidence: {checkpoint[0]} has no calibration; run `translator calibrate "
            f"--checkpoint CKPT`{again}, or use --confidence for raw scores"
        )


def _line_guides(prefix, prefix_file, constraint, constraint_file, terms, ignore_case):
    """The options' target prefixes, phrases and terms; a --prefix or --constraint of
    nothing visible is refused here, where the option is known."""
    from translator.data.user_text import phrase
    from translator.decode.line_guides import LineGuides, Terms
    from translator.decode.translate_io import checked_text

    return LineGuides(
        phrase(checked_text(prefix, "--prefix"), "--prefix") if prefix is not None else None,
        prefix_file,
        [phrase(checked_text(c, "--constraint"), "--constraint") for c in constraint or []],
        constraint_file,
        Terms.option(terms, ignore_case),
        terms,
    )


def _write(translator, request, text, input_file, output_file, guides, checkpoint) -> None:
    """The translations of the TEXT arguments, standard input or --input, where asked."""
    from translator.decode.translate_io import print_file, stdin_chunks, write_translations

    if text:
        write_translations(translator, [text], sys.stdout, request, guides=guides)
        return
    if input_file is None:  # stdin: each line back as soon as it can be
        seeded = request.sampling is not None and request.sampling.seed is not None
        lines = stdin_chunks(request.decode.batch_size, whole=seeded)
        write_translations(translator, lines, sys.stdout, request, guides=guides)
        return
    if output_file is None:
        print_file(translator, input_file, request, guides)
        return
    from translator.decode.resumable import model_stamps, translate_file

    translate_file(translator, input_file, output_file, request, model_stamps(checkpoint), guides)
