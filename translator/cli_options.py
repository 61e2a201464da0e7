"""Command-line pieces that several commands share: the decoding overrides of translate, eval
and serve, files to write, and how help shows option values. Light: no torch, no config."""

from __future__ import annotations

import inspect
import math
from pathlib import Path
from typing import Annotated

import typer
from typer.core import TyperCommand, TyperGroup

from translator.config.ranges import BATCH_SIZE, BEAM, LEN_PENALTY, MAX_LEN_A, MAX_LEN_B
from translator.errors import UserError
from translator.fileio import creatable_file, readable_file, real_target
from translator.fileio.outputs import kept


def _plain_types(params) -> None:
    """Help shows an option's metavar (FILE, N) and nothing after a flag or beside an
    argument's name, where typer would show Python types (`<bool>`, `<list[str]>`)."""
    for param in params:
        flag = getattr(param, "is_flag", False) or param.param_type_name == "argument"
        if flag and hasattr(param, "display_type_rich"):  # typers without it show none
            param.display_type_rich = lambda ctx: ""


def _reflowed(text: str) -> str:
    """Help text whose paragraphs the help screen wraps to its width: typer keeps the line
    breaks of a docstring's later paragraphs (wrapped for the source) and wraps again."""
    paragraphs = inspect.cleandoc(text).split("\n\n")
    return "\n\n".join(" ".join(p.split("\n")) for p in paragraphs)


class Command(TyperCommand):
    def format_help(self, ctx, formatter) -> None:
        _plain_types(self.get_params(ctx))
        self.help = _reflowed(self.help or "")
        super().format_help(ctx, formatter)


class Group(TyperGroup):
    def format_help(self, ctx, formatter) -> None:
        _plain_types(self.get_params(ctx))
        super().format_help(ctx, formatter)


def _print_version(asked: bool) -> None:
    if not asked:
        return
    from importlib.metadata import PackageNotFoundError, version

    try:
        number = version("translator")
    except PackageNotFoundError:  # a source tree that pip did not install
        from translator import __version__ as number
    typer.echo(f"translator {number}")
    raise typer.Exit()


VersionOpt = Annotated[
    bool,
    typer.Option(
        "--version", is_eager=True, callback=_print_version, help="Print the version and exit"
    ),
]


# Files named on the command line are checked as it is read, before any model is loaded.
def _input_file(path: Path | list[Path] | None) -> Path | list[Path] | None:
    if isinstance(path, list):  # (a repeatable option)
        return [readable_file(p) for p in path] or None
    return None if path is None else readable_file(path)


def _output_file(path: Path | None, option: str = "the output") -> Path | None:
    """`path` checked as a text or picture to write: never over a model (fileio.kept)."""
    if path is None:
        return None
    what = kept(path)
    if what is not None:
        link = f" (a link to {real_target(path)})" if path.is_symlink() else ""
        raise UserError(f"{option} {path}{link} is {what}; refusing to replace it",
                        "give a new file name")  # fmt: skip
    return creatable_file(path)


def _checkpoint_file(path: Path | None) -> Path | None:
    return None if path is None else creatable_file(path)


def _model_paths(paths: Path | list[Path] | None) -> Path | list[Path] | None:
    """--checkpoint paths: each a file or folder that exists (what it holds is checked as
    it loads), so a mistyped one is named at once, not after torch has been imported."""
    from translator.errors import checkpoint_not_found

    for path in [paths] if isinstance(paths, Path) else paths or []:
        if not path.exists():
            raise checkpoint_not_found(path)
    return paths


def checkpoint_option(help: str, metavar: str = "PATH"):
    """The `--checkpoint PATH` option of the commands that load models."""
    return typer.Option("--checkpoint", metavar=metavar, help=help, callback=_model_paths)


# The formats a picture is drawn in, by the file's suffix (matplotlib writes each).
PICTURE_FORMATS = (".png", ".svg", ".pdf")


def _picture_file(param: typer.CallbackParam, path: Path | None) -> Path | None:
    path = _output_file(path, param.opts[0])
    if path is not None and path.suffix.lower() not in PICTURE_FORMATS:
        raise typer.BadParameter(
            f"{path} is not named as a picture; end it in {', '.join(PICTURE_FORMATS)}"
        )
    return path


def picture_option(name: str, help: str):
    """A `--NAME FILE` option for a picture the command draws, in the format its suffix
    names (PICTURE_FORMATS)."""
    return typer.Option(name, help=help, metavar="FILE", callback=_picture_file)


def input_option(name: str, help: str):
    """A `--NAME FILE` option for a file the command reads."""
    return typer.Option(name, help=help, metavar="FILE", callback=_input_file)


def output_option(name: str, help: str, checkpoint: bool = False):
    """A `--NAME FILE` option for a file the command writes (whole, atomically): a text,
    never written over a model, or where `checkpoint`, a checkpoint (its command checks what
    it may replace)."""

    def text_file(path: Path | None) -> Path | None:
        return _output_file(path, name)

    return typer.Option(name, help=help, metavar="FILE",
                        callback=_checkpoint_file if checkpoint else text_file)  # fmt: skip


ConfigOpt = Annotated[
    Path, typer.Option("--config", "-c", metavar="FILE", help="The YAML config file")
]
SetOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--set",
        metavar="KEY=VALUE",
        help="Override a config key, e.g. --set train.lr=0.001 (repeatable)",
    ),
]
CkptOpt = Annotated[
    list[Path],
    checkpoint_option(
        "A checkpoint file such as RUN/best.pt or a folder `translator export` wrote (repeatable)"
    ),
]
EnsembleOpt = Annotated[
    bool,
    typer.Option("--ensemble", help="Decode with all --checkpoint models as one (mean log-probs)"),
]
QuantizeOpt = Annotated[
    str | None,
    typer.Option(
        "--quantize", metavar="SCHEME", help="int8: PyTorch dynamic quantization (on the CPU)"
    ),
]
TagOpt = Annotated[
    str | None,
    typer.Option(
        "--tag",
        metavar="TAG",
        help="Put this tag of the model's corpora (data.corpora[].tag) before every source",
    ),
]
TgtLangOpt = Annotated[
    str | None,
    typer.Option(
        "--tgt-lang",
        metavar="LANG",
        help="The language to translate into, for a model of several target languages",
    ),
]
SrcLangOpt = Annotated[
    str | None,
    typer.Option(
        "--src-lang",
        metavar="LANG",
        help="The source language of the test split, for a model of several",
    ),
]
# Required phrases (decode/line_guides.py): a line per sentence of the input or test set.
ConstraintsOpt = Annotated[
    Path | None,
    input_option("--constraints", "Per sentence, the phrases it must hold (TAB between)"),
]
TermsOpt = Annotated[
    Path | None,
    input_option("--terms", "Terminology TSV: a source term found makes its target required"),
]
TermsIgnoreCaseOpt = Annotated[
    bool, typer.Option("--terms-ignore-case", help="Find source terms in any letter case")
]


def _device_name(name: str) -> str:
    """A device the machine has, checked before any model is loaded."""
    if name not in ("auto", "cpu"):
        from translator.runtime import pick_device

        pick_device(name, "--device")
    return name


DeviceOpt = Annotated[
    str,
    typer.Option(
        "--device",
        metavar="DEVICE",
        help="auto, cpu, cuda, cuda:N or mps",
        callback=_device_name,
    ),
]


def finite(low: float | None = None, high: float | None = None):
    """A parser of a finite number within [low, high] (None: no end). click's ranges let inf
    in and send nan to a message about the range's end (no comparison with nan is true)."""

    def parse(text: str) -> float:
        try:
            number = float(text)
        except ValueError:
            raise typer.BadParameter(f"{text!r} is not a number") from None
        if not math.isfinite(number):
            raise typer.BadParameter(f"expected a finite number, got {text}")
        if (low is not None and number < low) or (high is not None and number > high):
            raise typer.BadParameter(f"{text} is not in the range {low:g} to {high:g}")
        return number

    return parse


def number_option(name: str, metavar: str, help: str, limits: tuple, **kwargs):
    """A `--NAME N` option for a number in `limits` (both ends included, translator/config/ranges.py),
    which its help shows; a float option refuses inf and nan."""
    low, high = limits
    if isinstance(low, float):
        shown = f"{help} [{low:g}<=x<={high:g}]"
        return typer.Option(name, metavar=metavar, help=shown, parser=finite(low, high), **kwargs)
    return typer.Option(name, min=low, max=high, metavar=metavar, help=help, **kwargs)


# Decoding overrides: each replaces its key of the model's decode section (named in its help).
BeamOpt = Annotated[
    int | None,
    number_option(
        "--beam",
        "N",
        "Beam size, 1: greedy search (default: decode.beam)",
        BEAM,
    ),
]
LenPenaltyOpt = Annotated[
    float | None,
    number_option(
        "--len-penalty",
        "ALPHA",
        "Length penalty: hypotheses are ranked by log-probability / ((5 + length) / 6) "
        "** ALPHA (decode.len_norm gnmt), or / length ** ALPHA (power, as an imported "
        "model); 0 ranks by log-probability alone (default: decode.len_penalty)",
        LEN_PENALTY,
    ),
]
MaxLenAOpt = Annotated[
    float | None,
    number_option(
        "--max-len-a",
        "A",
        "Longest output: A * source subwords + B (default: decode.max_len_a)",
        MAX_LEN_A,
    ),
]
MaxLenBOpt = Annotated[
    int | None,
    number_option("--max-len-b", "B", "See --max-len-a (default: decode.max_len_b)", MAX_LEN_B),
]
BatchSizeOpt = Annotated[
    int | None,
    number_option(
        "--batch-size",
        "N",
        "Sentences decoded together at most (default: decode.batch_size)",
        BATCH_SIZE,
    ),
]


def decode_overrides(
    dc, beam=None, len_penalty=None, max_len_a=None, max_len_b=None, batch_size=None, nbest=1
):
    """The decode section `dc` with the options that were given put in; the beam at least
    `nbest` wide, so that it holds the K best asked for."""
    given = {
        "beam": beam,
        "len_penalty": len_penalty,
        "max_len_a": max_len_a,
        "max_len_b": max_len_b,
        "batch_size": batch_size,
    }
    dc = dc.replace(**{key: value for key, value in given.items() if value is not None})
    return dc.replace(beam=nbest) if nbest > dc.beam else dc
