"""What a resumable translation into G (decode/resumable.py) has finished inside the chunk it
is on: each batch's translations, appended to G.partial.batches and made durable as the
batch ends. A run stopped mid-chunk loses at most the batch it was decoding; the same
command run again plans the chunk's batches as before (decode/batches.py) and takes those
it finds here instead of decoding them, so its output is the uninterrupted run's.

A line of the file is one batch: the job it belongs to (a digest of G.partial.json's
identity), the input line its chunk starts at, the batch's rows (line numbers in the
chunk) and their translations. A line of another job or chunk, or of other rows (a changed
batch size plans other batches), is not used, and a line cut short by the stop is ignored.
The file is emptied when its chunk is recorded in G.partial.json."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

from translator.decode.batches import Translation


def _plain(t: Translation) -> dict:
    """A Translation as JSON can hold it (numbers as Python's, which read back exactly)."""

    def floats(values):
        return None if values is None else [float(v) for v in values]

    return {
        "text": t.text,
        "score": float(t.score),
        "tokens": [int(i) for i in t.tokens],
        "alignment": None if t.alignment is None else [[int(i), int(j)] for i, j in t.alignment],
        "logprobs": floats(t.logprobs),
        "confidence": None if t.confidence is None else float(t.confidence),
        "word_confidence": floats(t.word_confidence),
    }


def _translation(d: dict) -> Translation:
    def tupled(values):
        return None if values is None else tuple(values)

    alignment = d["alignment"]
    return Translation(
        d["text"],
        d["score"],
        tuple(d["tokens"]),
        None if alignment is None else tuple((i, j) for i, j in alignment),
        tupled(d["logprobs"]),
        d["confidence"],
        tupled(d["word_confidence"]),
    )


class Journal:
    """G.partial.batches (module docstring), open for appending while a job runs."""

    def __init__(self, path: Path, identity: dict):
        self.path = path
        self.job = hashlib.sha256(json.dumps(identity, sort_keys=True).encode()).hexdigest()
        self.file = None
        self.start, self.saved = 0, {}

    def chunk(self, start: int, bar) -> ChunkProgress:
        """Begin the chunk from input line `start`: what an earlier run finished of it is
        read back; the returned progress both moves `bar` and keeps each new batch."""
        self.start, self.saved = start, self._read(start)
        if self.file is None:
            self.file = open(self.path, "ab")
        return ChunkProgress(self, bar)

    def _read(self, start: int) -> dict:
        saved = {}
        try:
            with open(self.path, "rb") as f:
                for line in f:
                    try:
                        entry = json.loads(line)
                        if entry["job"] == self.job and entry["start"] == start:
                            found = [[_translation(d) for d in hyps] for hyps in entry["found"]]
                            saved[tuple(entry["rows"])] = found
                    except (ValueError, KeyError, TypeError):
                        continue  # cut short by the stop, or not this chunk's
        except FileNotFoundError:
            pass
        return saved

    def keep(self, rows: list[int], found: list) -> None:
        if tuple(rows) in self.saved:
            return
        entry = {"job": self.job, "start": self.start, "rows": rows,
                 "found": [[_plain(t) for t in hyps] for hyps in found]}  # fmt: skip
        self.file.write(json.dumps(entry).encode("utf-8") + b"\n")
        self.file.flush()
        os.fsync(self.file.fileno())

    def clear(self) -> None:
        """The chunk is recorded: its batches are no longer needed."""
        self.saved = {}
        self.file.truncate(0)

    def close(self) -> None:
        if self.file is not None:
            self.file.close()
            self.file = None


class ChunkProgress:
    """The `progress` decode/batches.in_batches takes for a journaled chunk: the caller's bar
    of lines, plus `recall` and `keep` for its batches."""

    def __init__(self, journal: Journal, bar):
        self.journal, self.bar = journal, bar

    def update(self, n: int) -> None:
        self.bar.update(n)

    def recall(self, rows: list[int]) -> list | None:
        return self.journal.saved.get(tuple(rows))

    def keep(self, rows: list[int], found: list) -> None:
        self.journal.keep(rows, found)
