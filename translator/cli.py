"""The `translator` command: train, eval, translate. Thin: parse, call one function, print."""

from __future__ import annotations

import json
import logging
import sys
from dataclasses import replace
from pathlib import Path
from typing import Annotated

import typer
from tqdm import tqdm

from translator.errors import UserError, one_line
from translator.serve.command import serve

app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    help="Neural machine translation: train, evaluate and translate.",
)

ConfigOpt = Annotated[Path, typer.Option("--config", "-c", help="YAML config file")]
SetOpt = Annotated[
    list[str] | None,
    typer.Option("--set", help="Override a config key, e.g. --set train.lr=0.001 (repeatable)"),
]
BeamOpt = Annotated[int | None, typer.Option("--beam", min=1, help="Beam size (default: config)")]
CkptOpt = Annotated[
    list[Path],
    typer.Option("--checkpoint", help="A checkpoint, e.g. runs/demo/best.pt (repeatable)"),
]
EnsembleOpt = Annotated[
    bool,
    typer.Option("--ensemble", help="Decode with all --checkpoint models as one (mean log-probs)"),
]
DeviceOpt = Annotated[str, typer.Option("--device", help="auto, cpu, cuda or mps")]
QuantizeOpt = Annotated[
    str | None, typer.Option("--quantize", help="int8: PyTorch dynamic quantization (CPU)")
]


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


@app.command()
def train(
    config: ConfigOpt,
    set_: SetOpt = None,
    resume: Annotated[bool, typer.Option("--resume", help="Continue from RUN/last.pt")] = False,
    init_from: Annotated[
        Path | None,
        typer.Option("--init-from", help="Fine-tune: start from this checkpoint's weights"),
    ] = None,
    overwrite: Annotated[
        bool, typer.Option("--overwrite", help="Replace an earlier run's checkpoints in RUN")
    ] = False,
):
    """Train a model as the config says; writes RUN/best.pt, RUN/last.pt and RUN/summary.json."""
    from translator.config import load_config
    from translator.train import train as run_training

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


@app.command()
def prepare(config: ConfigOpt, set_: SetOpt = None):
    """Clean and tokenize the training split into memory-mapped arrays (train does this
    itself when the prepared data is missing or out of date)."""
    from translator.config import load_config
    from translator.data.prepare import prepare as run_prepare

    data = run_prepare(load_config(config, set_ or []))
    m = data.manifest
    typer.echo(
        f"{m['pairs']:,} training pairs of {m['counts']['read']:,} read, "
        f"{m['seconds']:.1f}s to prepare; in {data.folder}"
    )


@app.command()
def average(
    run_dir: Annotated[Path | None, typer.Argument(help="A run folder: its step-*.pt")] = None,
    last: Annotated[int | None, typer.Option("--last", min=1, help="Only the newest N")] = None,
    checkpoint: Annotated[
        list[Path] | None, typer.Option("--checkpoint", help="A checkpoint (repeatable)")
    ] = None,
    output: Annotated[Path | None, typer.Option("--output", help="Default RUN/average.pt")] = None,
):
    """Write a checkpoint whose weights are the mean of a run's step checkpoints (or of the
    --checkpoint files)."""
    from translator.averaging import average_command

    typer.echo(average_command(run_dir, last, checkpoint or [], output))


def _decode_settings(cfg, beam: int | None, batch_size: int | None):
    dc = cfg.decode
    if beam is not None:
        dc = replace(dc, beam=beam)
    if batch_size is not None:
        dc = replace(dc, batch_size=batch_size)
    return dc


@app.command("eval")
def evaluate(
    checkpoint: CkptOpt,
    ensemble: EnsembleOpt = False,
    split: Annotated[str, typer.Option("--split", help="dev or test")] = "test",
    beam: BeamOpt = None,
    src: Annotated[Path | None, typer.Option("--src", help="Score this source file ...")] = None,
    ref: Annotated[
        Path | None, typer.Option("--ref", help="... against this reference file")
    ] = None,
    output: Annotated[Path | None, typer.Option("--output", help="Write hypotheses here")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object")] = False,
    by_length: Annotated[
        bool, typer.Option("--by-length", help="BLEU per source-length bucket")
    ] = False,
    plot: Annotated[
        Path | None, typer.Option("--plot", help="Draw BLEU by source length to this PNG")
    ] = None,
    set_: SetOpt = None,
    batch_size: Annotated[int | None, typer.Option("--batch-size", min=1)] = None,
    device: DeviceOpt = "auto",
    quantize: QuantizeOpt = None,
):
    """Decode a split (or --src/--ref files) and print sacreBLEU BLEU, chrF and TER, for each
    --checkpoint, or for all of them as one model with --ensemble."""
    from translator.ensemble import load_translator
    from translator.fileio import atomic_write_bytes
    from translator.plots import plot_by_length

    if split not in ("dev", "test"):
        raise UserError(f"--split must be dev or test, got '{split}'")
    if (src is None) != (ref is None):
        raise UserError("--src and --ref go together: give both files or neither")
    models = [checkpoint] if ensemble else [[path] for path in checkpoint]
    if output is not None and len(models) > 1:
        raise UserError("--output takes one --checkpoint (or --ensemble); give one model at a time")
    series = []
    for paths in models:
        path = " + ".join(map(str, paths))
        translator = load_translator(paths, ensemble, device, quantize)
        result, hyps = _evaluate_one(
            translator,
            path,
            split,
            beam,
            src,
            ref,
            set_,
            batch_size,
            by_length or plot is not None,
        )
        series.append((translator.cfg.model.type, paths, result.get("by_length", [])))
        if output is not None:
            atomic_write_bytes(output, "".join(h + "\n" for h in hyps).encode("utf-8"))
        if as_json:
            typer.echo(json.dumps(result, ensure_ascii=False))
            continue
        if len(models) > 1:
            typer.echo(f"== {path}")
        typer.echo(f"{result['data']}: {result['n']} sentences, beam {result['beam']}")
        typer.echo(f"BLEU {result['bleu']:.2f}  chrF {result['chrf']:.2f}  TER {result['ter']:.2f}")
        typer.echo(f"signature: {result['signature']}")
        for row in result.get("by_length", []) if by_length else []:
            typer.echo(
                f"  source words {row['bucket']:>6}: BLEU {row['bleu']:6.2f}  (n={row['n']})"
            )
    if plot is not None:
        plot_by_length(series, str(plot))
        typer.echo(f"plot written to {plot}", err=True)


def _evaluate_one(translator, path, split, beam, src, ref, overrides, batch_size, with_lengths):
    from translator.config import config_from_dict
    from translator.data.corpus import open_source, read_pair_files
    from translator.evaluate import by_length, score

    cfg = translator.cfg
    if overrides:  # --set applies to the data and the decoding settings alike
        cfg = config_from_dict(cfg.to_dict(), f"{path} (saved config)", overrides)
    if src is not None:
        pairs, what = read_pair_files(src, ref), f"{src} -> {ref}"
    else:
        source = open_source(cfg.data, cfg.seed)  # the training split is not read
        pairs = list(source.pairs(split))
        what = f"{source.description} {split}"
    dc = _decode_settings(cfg, beam, batch_size)
    sources, refs = [s for s, _ in pairs], [t for _, t in pairs]
    hyps = [r[0].text for r in translator.translate(sources, dc, progress=True)]
    result = {**score(hyps, refs), "beam": dc.beam, "len_penalty": dc.len_penalty}
    result.update(data=what, checkpoint=path)
    if with_lengths:
        result["by_length"] = by_length(sources, hyps, refs)
    return result, hyps


@app.command()
def translate(
    checkpoint: CkptOpt,
    text: Annotated[list[str] | None, typer.Argument(help="Sentences; none = read stdin")] = None,
    ensemble: EnsembleOpt = False,
    beam: BeamOpt = None,
    sampling: Annotated[
        str | None, typer.Option("--sampling", help="Sample: topk:K or topp:P (no search)")
    ] = None,
    temperature: Annotated[
        float | None, typer.Option("--temperature", help="Sampling temperature (default 1.0)")
    ] = None,
    seed: Annotated[int | None, typer.Option("--seed", help="Seed of the sampling")] = None,
    nbest: Annotated[int, typer.Option("--nbest", min=1, help="Print K lines per input")] = 1,
    batch_size: Annotated[int | None, typer.Option("--batch-size", min=1)] = None,
    device: DeviceOpt = "auto",
    plot_attention: Annotated[
        Path | None,
        typer.Option("--plot-attention", help="Save the attention heatmap of one sentence (PNG)"),
    ] = None,
    layer: Annotated[
        int, typer.Option("--layer", help="Transformer decoder layer to draw (-1: last)")
    ] = -1,
    input_file: Annotated[
        Path | None, typer.Option("--input", help="Translate this file (one sentence a line)")
    ] = None,
    output_file: Annotated[
        Path | None, typer.Option("--output", help="Write the translations here")
    ] = None,
    interactive: Annotated[
        bool, typer.Option("--interactive", help="A prompt loop for typing sentences")
    ] = False,
    quantize: QuantizeOpt = None,
):
    """Translate sentences given as arguments, standard input, or --input F, line by line.
    --checkpoint takes a checkpoint file or a folder written by `translator export`."""
    from translator.ensemble import load_translator
    from translator.sampling import sampling_options
    from translator.translate_io import (
        chunks,
        draw_attention,
        interactive_loop,
        translate_file,
        write_translations,
    )

    sampler = sampling_options(sampling, temperature, seed, beam)
    if sampler is not None and checkpoint[0].is_dir():
        raise UserError(f"--sampling: {checkpoint[0]} is an exported model, which only searches")
    translator = load_translator(checkpoint, ensemble, device, quantize)
    translator.sampling = sampler
    dc = _decode_settings(translator.cfg, beam, batch_size)
    if nbest > dc.beam:
        dc = replace(dc, beam=nbest)
    if plot_attention is not None:
        draw_attention(translator, text or [], dc, plot_attention, layer)
        return
    if output_file is not None and input_file is None:
        raise UserError("--output needs --input F (arguments and stdin go to standard output)")

    if interactive:
        interactive_loop(translator, dc)
        return
    if text:
        write_translations(translator, [list(text)], sys.stdout, dc, nbest)
        return
    if input_file is None:  # stdin: a person typing gets each line back at once
        chunk = 1 if sys.stdin.isatty() else dc.batch_size
        write_translations(translator, chunks(sys.stdin, chunk), sys.stdout, dc, nbest)
        return
    translate_file(translator, input_file, output_file, dc, nbest)


@app.command()
def export(
    checkpoint: Annotated[Path, typer.Option("--checkpoint", help="The checkpoint to export")],
    output: Annotated[Path, typer.Option("--output", help="The folder to write")],
    format_: Annotated[str, typer.Option("--format", help="ctranslate2")] = "ctranslate2",
    quantization: Annotated[
        str, typer.Option("--quantization", help="float32, int8 or int8_float32")
    ] = "float32",
):
    """Write a Transformer checkpoint as a CTranslate2 model folder that translate and eval
    take as --checkpoint."""
    from translator.export import describe, export_checkpoint

    typer.echo(describe(*export_checkpoint(checkpoint, format_, quantization, output)))


@app.command()
def curves(
    runs: Annotated[list[Path], typer.Argument(help="Run folders or their summary.json files")],
    plot: Annotated[Path, typer.Option("--plot", help="The PNG to draw")],
):
    """Dev BLEU against wall-clock minutes and training loss against steps, one line per run."""
    from translator.curves import draw_curves

    typer.echo(draw_curves(runs, plot), err=True)


app.command()(serve)  # translator/serve/command.py


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
        app(standalone_mode=False)
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
