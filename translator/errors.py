"""The one exception type for mistakes a user can fix (a missing optional dependency too).

The CLI prints a UserError as a single line on stderr and exits with code 2;
anything else is a bug and may show a traceback.
"""

import importlib
from types import ModuleType


def one_line(text: str) -> str:
    """Control characters (a newline in a YAML key, say) shown as escapes, so that an
    error that quotes the user's input stays on one line."""
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


class UserError(Exception):
    """A problem in the user's input (config, data, checkpoint, command line)."""

    def __init__(self, message: str, hint: str | None = None):
        self.message = message = one_line(message)
        self.hint = hint = None if hint is None else one_line(hint)
        super().__init__(message if hint is None else f"{message} ({hint})")


class FileProblem(UserError):
    """A UserError about a file other than the one being read, whose message names it: a
    reader that prefixes its own file's name to the errors it passes on leaves it as is."""


def checkpoint_not_found(path) -> UserError:
    """The error of a --checkpoint path that is not there, whether the command line or the
    loader finds it so."""
    return UserError(
        f"checkpoint not found: {path}", "training writes RUN_DIR/best.pt and RUN_DIR/last.pt"
    )


def optional_import(module: str, extra: str, purpose: str) -> ModuleType:
    """Import an optional dependency; if it is missing, a UserError whose hint installs the
    project's extra that brings it (`pip install "translator[EXTRA]"`, as pyproject names it)."""
    try:
        return importlib.import_module(module)
    except ImportError:
        raise UserError(
            f"{purpose} need {module}, which is not installed",
            f'pip install "translator[{extra}]"',
        ) from None
