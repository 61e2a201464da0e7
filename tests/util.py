"""Helpers shared by the test modules."""

import pytest

from translator.errors import UserError


def user_error(fn, *args, **kwargs) -> str:
    """Call fn, require a UserError with a one-line message and return that message."""
    with pytest.raises(UserError) as excinfo:
        fn(*args, **kwargs)
    message = str(excinfo.value)
    assert message.strip(), "empty error message"
    assert "\n" not in message and "\r" not in message, message
    assert "\x1b" not in message, message  # no terminal colour codes
    return message
