"""The `translator` command: train, eval, translate. Thin: parse, call one function, print."""

from __future__ import annotations

import json
import logging
import sys
from pathlib import Path
from typing import Annotated

import typer
from tqdm import tqdm

from translator.cli_options import (
    BatchSizeOpt,
    BeamOpt,
    CkptOpt,
    Command,
    ConfigOpt,
    ConstraintsOpt,
    DeviceOpt,
    EnsembleOpt,
    Group,
    LenPenaltyOpt,
    MaxLenAOpt,
    MaxLenBOpt,
    QuantizeOpt,
    SetOpt,
    SrcLangOpt,
    TagOpt,
    TermsIgnoreCaseOpt,
    TermsOpt,
    TgtLangOpt,
    VersionOpt,
    decode_overrides,
    input_option,
    output_option,
)
from translator.commands.distill import distill
from translator.commands.filter import filter_pairs
from translator.commands.prepare import prepare
from translator.commands.score import score
from translator.commands.translate import translate
from translator.errors import UserError, one_line
from translator.fileio import refusal
from translator.serve.command import serve

app = typer.Typer(
    cls=Group,
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    help="Neural machine translation: train, evaluate, translate and serve.",
)


class TqdmHandler(logging.Handler):
    """Log lines printed above the progress bar instead of through it."""

    def emit(self, record: logging.LogRecord) -> None:
        tqdm.write(self.format(record), file=sys.stderr)


def _setup_logging() -> None:
    handler = TqdmHandler()
    handler.setFormatter(logging.Formatter("%(message)s"))
    root = logging.getLogger("translator")
    root.handlers[:] = [handler]
    root.setLevel(logging.INFO)
    root.propagate = False


@app.callback()
def _global_options(version: VersionOpt = False) -> None:
    pass


@app.command(cls=Command)
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
    from translator.train.trainer import train as run_training

    cfg = load_config(config, set_ or [])
    summary = run_training(cfg, resume=resume, init_from=init_from, overwrite=overwrite)
    best = (
        f"best dev BLEU {summary['best_dev_bleu']:.2f} at step {summary['best_step']}"
        if summary["best_step"]
        else "no validation yet"
    )
    typer.echo(
        f"{summary['stop_reason']}; {best}; "
        f"{summary['target_tokens_per_second']:,} target tokens/s; checkpoints in {cfg.run_dir}"
    )


app.command(cls=Command)(prepare)  # translator/commands/prepare.py


@app.command(cls=Command)
def average(
    run_dir: Annotated[
        Path | None, typer.Argument(metavar="RUN", help="A run folder: its step-*.pt")
    ] = None,
    last: Annotated[
        int | None, typer.Option("--last", min=1, metavar="N", help="Only the newest N")
    ] = None,
    checkpoint: Annotated[
        list[Path] | None,
        typer.Option("--checkpoint", metavar="FILE", help="A checkpoint to average (repeatable)"),
    ] = None,
    output: Annotated[
        Path | None, output_option("--output", "The checkpoint to write (default RUN/average.pt)")
    ] = None,
):
    """Average the weights of a run's step checkpoints (or of --checkpoint files)."""
    from translator.train.averaging import average_command

    typer.echo(average_command(run_dir, last, checkpoint or [], output))


@app.command("eval", cls=Command)
def evaluate(
    checkpoint: CkptOpt,
    split: Annotated[
        str, typer.Option("--split", metavar="SPLIT", help="dev or test of the model's data")
    ] = "test",
    src: Annotated[Path | None, input_option("--src", "Score this source file ...")] = None,
    ref: Annotated[Path | None, input_option("--ref", "... against this reference file")] = None,
    ensemble: EnsembleOpt = False,
    beam: BeamOpt = None,
    len_penalty: LenPenaltyOpt = None,
    max_len_a: MaxLenAOpt = None,
    max_len_b: MaxLenBOpt = None,
    batch_size: BatchSizeOpt = None,
    output: Annotated[
        Path | None, output_option("--output", "Write the translations to this file")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object")] = False,
    by_length: Annotated[
        bool, typer.Option("--by-length", help="BLEU per source-length bucket")
    ] = False,
    plot: Annotated[
        Path | None, output_option("--plot", "Draw BLEU by source length to this PNG")
    ] = None,
    set_: Annotated[
        list[str] | None,
        typer.Option(
            "--set",
            metavar="KEY=VALUE",
            help="Override a key of the model's config, e.g. --set data.test.src=F (repeatable)",
        ),
    ] = None,
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
    of them as one model with --ensemble."""
    from translator.config import config_from_dict
    from translator.config.languages import scored_direction
    from translator.decode.evaluate import evaluate_translator, report_lines
    from translator.decode.line_guides import LineGuides, Terms
    from translator.engines.load import load_engine
    from translator.fileio import atomic_write_bytes
    from translator.plots.figures import plot_by_length

    if split not in ("dev", "test"):
        raise UserError(f"--split must be dev or test, got '{split}'")
    if (src is None) != (ref is None):
        raise UserError("--src and --ref go together: give both files or neither")
    glossary = Terms.read(terms, terms_ignore_case) if terms is not None else None
    guides = LineGuides(constraint_file=constraint_file, terms=glossary, terms_file=terms)
    from translator.fileio.outputs import distinct_outputs

    inputs = {"--src": src, "--ref": ref, "--constraints": constraint_file, "--terms": terms}
    checkpoints = {f"--checkpoint {p}": p for p in checkpoint}
    written = {"--output": output, "--plot": plot}
    distinct_outputs(written, {**inputs, **checkpoints})
    models = [checkpoint] if ensemble else [[path] for path in checkpoint]
    if output is not None and len(models) > 1:
        raise UserError("--output takes one --checkpoint (or --ensemble); give one model at a time")
    series = []
    for paths in models:
        path = " + ".join(map(str, paths))
        translator = load_engine(paths, device, quantize, ensemble, tag, tgt_lang)
        cfg = translator.cfg
        if set_:  # --set applies to the data and the decoding settings alike
            cfg = config_from_dict(cfg.to_dict(), f"{path} (saved config)", set_)
        cfg = cfg.replace(data=scored_direction(cfg.data, src_lang, tgt_lang))
        dc = decode_overrides(cfg.decode, beam, len_penalty, max_len_a, max_len_b, batch_size)
        files, lengths = (src, ref), by_length or plot is not None
        result, hyps = evaluate_translator(
            translator, cfg.data, cfg.seed, dc, split, files, lengths, guides, written
        )
        result["checkpoint"] = path
        result["direction"] = f"{cfg.data.src_lang}-{cfg.data.tgt_lang}"
        series.append((translator.cfg.model.type, paths, result.get("by_length", [])))
        if output is not None:
            atomic_write_bytes(output, "".join(h + "\n" for h in hyps).encode("utf-8"))
        if as_json:
            typer.echo(json.dumps(result, ensure_ascii=False))
            continue
        if len(models) > 1:
            typer.echo(f"== {path}")
        typer.echo("\n".join(report_lines(result, by_length)))
    if plot is not None:
        plot_by_length(series, str(plot))
        typer.echo(f"plot written to {plot}", err=True)


app.command(cls=Command)(translate)  # translator/commands/translate.py


@app.command(cls=Command)
def export(
    checkpoint: Annotated[
        Path, typer.Option("--checkpoint", metavar="FILE", help="The checkpoint to export")
    ],
    output: Annotated[
        Path, typer.Option("--output", metavar="DIR", help="The folder to write (made if absent)")
    ],
    format_: Annotated[
        str, typer.Option("--format", metavar="FORMAT", help="ctranslate2, the one format")
    ] = "ctranslate2",
    quantization: Annotated[
        str,
        typer.Option(
            "--quantization", metavar="TYPE", help="float32, int8 or int8_float32 weights"
        ),
    ] = "float32",
    vocab_map: Annotated[
        bool,
        typer.Option(
            "--vocab-map",
            help="Add a vocabulary shortlist learnt from the checkpoint's training data "
            "(decoding then scores only the subwords a source can bring)",
        ),
    ] = False,
    set_: SetOpt = None,
):
    """Write a Transformer checkpoint as a CTranslate2 model folder (fast CPU decoding).

    translate, eval and serve take the folder as --checkpoint. --set points --vocab-map at
    training files that have moved (e.g. --set data.dir=PATH)."""
    from translator.engines.export import describe, export_checkpoint

    typer.echo(
        describe(*export_checkpoint(checkpoint, format_, quantization, output, vocab_map, set_))
    )


@app.command(cls=Command)
def curves(
    runs: Annotated[
        list[Path],
        typer.Argument(metavar="RUN", help="Run folders or their summary.json files"),
    ],
    plot: Annotated[Path, output_option("--plot", "The PNG to draw")],
):
    """Draw runs' curves: dev BLEU by wall-clock minutes, training loss by steps."""
    from translator.plots.curves import draw_curves
    from translator.train.run_dir import summary_file

    typer.echo(draw_curves([(run, summary_file(run)) for run in runs], plot), err=True)


app.command(cls=Command)(serve)  # translator/serve/command.py
app.command(cls=Command)(score)  # translator/commands/score.py
app.command("filter", cls=Command)(filter_pairs)  # translator/commands/filter.py
app.command(cls=Command)(distill)  # translator/commands/distill.py


def _click_exceptions():
    """The exceptions module of the click that typer runs on: the `click` package for older
    typer versions, typer's own copy (`typer._click`) for newer ones. typer re-exports
    BadParameter from it under every version, so its module is the one to ask."""
    return sys.modules[typer.BadParameter.__module__]


def _show_usage_error(err) -> None:
    """Usage, a pointer to --help and the error as one `error:` line, like a UserError."""
    ctx = getattr(err, "ctx", None)
    if ctx is not None:
        print(ctx.get_usage(), file=sys.stderr)
        print(f"Try '{ctx.command_path} --help' for help.", file=sys.stderr)
    print(f"error: {one_line(err.format_message())}", file=sys.stderr)


def main() -> None:
    _setup_logging()
    click_errors = _click_exceptions()
    try:
        try:
            app(standalone_mode=False)
        except OSError as err:  # a full disk or a folder not ours is the user's to fix
            raise refusal(err) or err from None
    except UserError as err:
        msg = err.message + (f" (hint: {err.hint})" if err.hint else "")
        print(f"error: {msg}", file=sys.stderr)
        sys.exit(2)
    except (typer.Exit, SystemExit) as err:
        sys.exit(getattr(err, "exit_code", getattr(err, "code", 0)))
    except (KeyboardInterrupt, typer.Abort):
        print("interrupted", file=sys.stderr)
        sys.exit(130)
    except click_errors.ClickException as err:
        if type(err).__name__ == "NoArgsIsHelpError":  # bare `translator`: the help text
            err.show()
        else:
            _show_usage_error(err)
        sys.exit(2)


if __name__ == "__main__":
    main()
