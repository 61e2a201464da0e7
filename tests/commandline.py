"""The command line as the tests drive it: its commands, the decoding overrides translate,
eval and serve share, and `translator ARGS` run in this process with its outcome checked."""

from __future__ import annotations

import contextlib
import io
import logging
import sys
from typing import NamedTuple

import torch

from translator import cli

COMMANDS = [
    "train",
    "prepare",
    "average",
    "eval",
    "translate",
    "export",
    "curves",
    "import",
    "info",
    "serve",
    "score",
    "filter",
    "distill",
    "calibrate",
]
SENTENCES = ["Ein Hund läuft.", "Die alte Frau liest ein Buch.", "Zwei Katzen spielen."]

# decoding overrides on the command line, and the decode settings they make
OPTIONS = ["--beam", "3", "--len-penalty", "0", "--max-len-a", "0", "--max-len-b", "3"]
CHANGED = dict(beam=3, len_penalty=0.0, max_len_a=0.0, max_len_b=3, batch_size=2)


class Outcome(NamedTuple):
    """A finished `translator ARGS` run in this process, read as a subprocess's result."""

    returncode: int
    stdout: str
    stderr: str


def _main(*args) -> int:
    """The exit code of `translator ARGS` run in this process. What the command changes for
    the process (the `translator` logger's handlers, level and propagation, torch's thread
    count) is put back afterwards, as a process's end would."""
    argv = sys.argv
    logger = logging.getLogger("translator")
    kept = (logger.handlers[:], logger.level, logger.propagate, torch.get_num_threads())
    sys.argv = ["translator", *map(str, args)]
    try:
        cli.main()
        return 0
    except SystemExit as end:
        return end.code if isinstance(end.code, int) else (0 if end.code is None else 1)
    finally:
        sys.argv = argv
        logger.handlers[:], logger.propagate = kept[0], kept[2]
        logger.setLevel(kept[1])
        if torch.get_num_threads() != kept[3]:
            torch.set_num_threads(kept[3])


def run_cli(capsys, *args: str) -> tuple[int, str, str]:
    """(exit code, stdout, stderr) of `translator ARGS`, run in this process."""
    capsys.readouterr()
    code = _main(*args)
    out, err = capsys.readouterr()
    return code, out, err


def cli_here(capsys, *args) -> Outcome:
    """`translator ARGS` run in this process, its outcome shaped as tests/util.py's cli()
    gives a subprocess's: returncode, stdout, stderr."""
    return Outcome(*run_cli(capsys, *args))


def cli_captured(*args) -> Outcome:
    """cli_here for a fixture wider than one test, where capsys is not at hand: the
    command's standard output and error are read through contextlib's redirects."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = _main(*args)
    return Outcome(code, out.getvalue(), err.getvalue())


def assert_success_or_one_error(code: int, err: str) -> str | None:
    """Exit 0, or exit 2 with exactly one `error:` line, the last on stderr; that line."""
    assert "Traceback" not in err, err
    if code == 0:
        return None
    assert code == 2, (code, err)
    lines = err.strip().splitlines()
    assert lines and lines[-1].startswith("error: "), err
    assert sum(line.startswith("error:") for line in lines) == 1, err
    return lines[-1]
