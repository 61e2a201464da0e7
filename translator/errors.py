"""The one exception type for mistakes a user can fix.

The CLI prints a UserError as a single line on stderr and exits with code 2;
anything else is a bug and may show a traceback.
"""


class UserError(Exception):
    """A problem in the user's input (config, data, checkpoint, command line)."""

    def __init__(self, message: str, hint: str | None = None):
        self.message = message
        self.hint = hint
        super().__init__(message if hint is None else f"{message} ({hint})")
