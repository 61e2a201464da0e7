"""Standard input read as lines as they arrive (data/readers.arriving): a line longer than
one read (a file with no newline, or only carriage returns, piped in) is put together in
work that grows with its length, not with its square."""

import types

from translator.data import readers


class Piece(bytes):
    """A read's bytes, counting the bytes copied when something is glued before it."""

    glued = 0

    def __radd__(self, other):
        Piece.glued += len(other) + len(self)
        return bytes(other) + bytes(self)


def fake_os(data: bytes, size: int):
    """readers' `os`, whose read of any descriptor gives `data` `size` bytes at a time."""
    at = 0

    def read(fd, n):
        nonlocal at
        piece = Piece(data[at : at + min(n, size)])
        at += len(piece)
        return piece

    return types.SimpleNamespace(read=read)


def glued_reading(monkeypatch, data: bytes) -> tuple[list[bytes], int]:
    monkeypatch.setattr(readers, "os", fake_os(data, 1000))
    monkeypatch.setattr(readers, "_waiting", lambda fd: True)
    Piece.glued = 0
    lines = [line for chunk in readers.arriving(0, 8) for line in chunk]
    return lines, Piece.glued


def test_a_line_of_many_reads_is_joined_once(monkeypatch):
    copied = []
    for n in (100_000, 200_000):
        data = b"x" * n + b"\nshort\n" + b"y" * n
        lines, glued = glued_reading(monkeypatch, data)
        assert lines == [b"x" * n + b"\n", b"short\n", b"y" * n]
        copied.append(glued)
    assert copied[1] <= 2 * n + 2000  # (the old reading glued each read on: n² / 1000)
