"""The `translator` command: the app, its logging and its one-line errors. Each command
lives in translator/commands/; this file only registers them."""

from __future__ import annotations

import logging
import signal
import sys

import typer
from tqdm import tqdm

from translator.cli_options import (
    Command,
    Group,
    VersionOpt,
)
from translator.commands.calibrate import calibrate
from translator.commands.distill import distill
from translator.commands.eval import evaluate
from translator.commands.export import curves, export
from translator.commands.filter import filter_pairs
from translator.commands.import_model import import_model
from translator.commands.info import info
from translator.commands.prepare import prepare
from translator.commands.score import score
from translator.commands.serve import serve
from translator.commands.train import average, train
from translator.commands.translate import translate
from translator.errors import UserError, one_line
from translator.fileio import refusal

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


app.command(cls=Command)(train)  # translator/commands/train.py
app.command(cls=Command)(prepare)  # translator/commands/prepare.py
app.command(cls=Command)(average)  # translator/commands/train.py
app.command("eval", cls=Command)(evaluate)  # translator/commands/eval.py


app.command(cls=Command)(translate)  # translator/commands/translate.py
app.command(cls=Command)(export)  # translator/commands/export.py
app.command(cls=Command)(curves)  # translator/commands/export.py
app.command("import", cls=Command)(import_model)  # translator/commands/import_model.py
app.command(cls=Command)(info)  # translator/commands/info.py


app.command(cls=Command)(serve)  # translator/commands/serve.py
app.command(cls=Command)(score)  # translator/commands/score.py
app.command("filter", cls=Command)(filter_pairs)  # translator/commands/filter.py
app.command(cls=Command)(distill)  # translator/commands/distill.py
app.command(cls=Command)(calibrate)  # translator/commands/calibrate.py


def _click_exceptions():
    """The exceptions module of the click that typer runs on: the `click` package for older
    typer versions, typer's own copy (`typer._click`) for newer ones. typer re-exports
    BadParameter from it under every version, so its module is the one to ask."""
    return sys.modules[typer.BadParameter.__module__]


def _show_usage_error(err) -> None:
    """The error as one `error:` line, as a UserError's, its hint the command's --help."""
    ctx = getattr(err, "ctx", None)
    hint = f" (hint: see '{ctx.command_path} --help')" if ctx is not None else ""
    print(f"error: {one_line(err.format_message())}{hint}", file=sys.stderr)


def _terminated(signum, frame) -> None:
    raise KeyboardInterrupt


def main() -> None:
    _setup_logging()
    # SIGTERM stops a command as Ctrl-C does: its cleanup runs (temporary files removed, the
    # record of what it wrote kept) and it says so; training and serve handle both their way
    signal.signal(signal.SIGTERM, _terminated)
    click_errors = _click_exceptions()
    try:
        try:
            code = app(standalone_mode=False, prog_name="translator")
            sys.stdout.flush()  # (here, where a full disk under it is named)
        except OSError as err:  # a full disk or a folder not ours is the user's to fix
            raise refusal(err, "standard output") or err from None
        # typer turns Ctrl-C into an exit code of 130 and, outside standalone mode, returns it
        if code == 130:
            raise KeyboardInterrupt
        if isinstance(code, int) and not isinstance(code, bool) and code:
            sys.exit(code)
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
