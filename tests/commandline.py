"""The command line as the tests drive it: its commands, the decoding overrides translate,
eval and serve share, and `translator ARGS` run in this process with its outcome checked."""

from __future__ import annotations

import sys

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
    "serve",
    "score",
    "filter",
    "distill",
]
SENTENCES = ["Ein Hund läuft.", "Die alte Frau liest ein Buch.", "Zwei Katzen spielen."]

# decoding overrides on the command line, and the decode settings they make
OPTIONS = ["--beam", "3", "--len-penalty", "0", "--max-len-a", "0", "--max-len-b", "3"]
CHANGED = dict(beam=3, len_penalty=0.0, max_len_a=0.0, max_len_b=3, batch_size=2)


def run_cli(capsys, *args: str) -> tuple[int, str, str]:
    """(exit code, stdout, stderr) of `translator ARGS`, run in this process."""
    capsys.readouterr()
    argv = sys.argv
    sys.argv = ["translator", *map(str, args)]
    try:
        cli.main()
        code = 0
    except SystemExit as end:
        code = end.code if isinstance(end.code, int) else (0 if end.code is None else 1)
    finally:
        sys.argv = argv
    out, err = capsys.readouterr()
    return code, out, err


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
