"""A document translated resumably: the sentences' translations journalled beside the
output.

A document is read whole, its sentences are sent to the model in batches (units.BATCH),
and each batch's results are appended to G.journal (one JSON line per sentence: source,
translation, alignment) and made durable (fsync) before the next. The journal's first line
holds what the translations depend on (the input file's size and time, the format, the
model, the decoding settings); a run that differs in any of them starts over. A run that
stops leaves the journal; the same command run again serves its sentences from it (a line
cut short by the stop is dropped) and sends the model only the rest, so the file it writes
is the one an uninterrupted run writes. G is written whole by rename (fileio), then the
journal is removed.
"""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path

from translator.documents import translate_bytes
from translator.errors import UserError
from translator.fileio import (
    atomic_write_bytes,
    cannot_create,
    real_target,
    writable_file,
    written_through,
)
from translator.progress import progress_bar

log = logging.getLogger(__name__)


def journal_path(output: Path) -> Path:
    return output.with_name(output.name + ".journal")


def _saved(journal: Path | None, identity: dict) -> list[list]:
    """[source, translation, alignment] rows an earlier run of the same job journalled."""
    if journal is None or not journal.is_file():
        return []
    lines = journal.read_bytes().split(b"\n")
    try:
        same = json.loads(lines[0]) == identity
    except ValueError:
        same = False
    if not same:
        log.info("%s is from another input, model or settings: starting over", journal)
        return []
    rows = []
    for line in lines[1:]:
        try:
            rows.append(json.loads(line))
        except ValueError:  # the line a stop cut short, and anything after it
            break
    return rows


class Journal:
    """A `translate` callable (units.Translate) that serves journalled sentences and
    journals the ones it sends to `translate`."""

    def __init__(self, path: Path | None, identity: dict, translate, bar):
        self.rows, self.translate, self.bar = _saved(path, identity), translate, bar
        self.used = 0  # rows served or written so far, in call order
        self.path, self.identity, self.file = path, identity, None
        if self.rows:
            log.info("resuming: %d sentences were translated before", len(self.rows))

    def _write(self, rows) -> None:
        if self.path is None:  # (no journal: written to a device)
            return
        if self.file is None:  # opened on the first batch: a refused input leaves none
            try:
                self.file = open(self.path, "wb")  # rewritten whole: drops a cut line
            except OSError as err:
                raise cannot_create(err, self.path) from None
            rows = [self.identity, *self.rows[: self.used], *rows]
        self.file.write(b"".join(json.dumps(r).encode() + b"\n" for r in rows))
        self.file.flush()
        os.fsync(self.file.fileno())

    def expect(self, count: int) -> None:
        """`count` more sentences are coming: the progress bar's total."""
        self.bar.total = (self.bar.total or 0) + count
        self.bar.refresh()

    def __call__(self, sentences: list[str]):
        out, todo = [], []
        for s in sentences:
            row = self.rows[self.used] if self.used < len(self.rows) else None
            if row is not None and row[0] == s and not todo:
                out.append((row[1], row[2]))
                self.used += 1
            else:
                todo.append(s)
        self.bar.update(len(out))
        if todo:
            del self.rows[self.used :]  # past here the journal no longer matches
            fresh = self.translate(todo)
            new = [[s, t, al and [list(p) for p in al]] for s, (t, al) in zip(todo, fresh,
                                                                              strict=True)]  # fmt: skip
            self._write(new)
            self.rows += new
            self.used += len(new)
            out += [(t, al) for _, t, al in new]
            self.bar.update(len(todo))
        return out

    def close(self) -> None:
        if self.file is not None:
            self.file.close()


def translate_document(input_file: Path, output_file: Path, fmt: str, translate, lang,
                       identity: dict, target: str | None = None) -> None:  # fmt: skip
    """Translate the document `input_file` of format `fmt` from `lang` into `target`, into
    `output_file` resumably (module docstring); `identity`: what else the translations
    depend on (model, decoding settings)."""
    streamed = written_through(output_file)  # a descriptor, device or FIFO: no journal
    output_file = output_file if streamed else writable_file(real_target(output_file))
    journal = None if streamed else journal_path(output_file)
    if journal is not None and (journal.is_symlink() or journal.exists()) and not journal.is_file():
        raise UserError(
            f"{journal} is in the way: a translation into {output_file} keeps its journal "
            "there; move it or choose another --output"
        )
    data = Path(input_file).read_bytes()
    st = Path(input_file).stat()
    stamp = [str(Path(input_file).resolve()), st.st_size, st.st_mtime_ns]
    ident = {"input": stamp, "format": fmt, "lang": lang, **identity}
    with progress_bar(total=None, desc="translate", unit="sentence") as bar:
        job = Journal(journal, ident, translate, bar)
        try:
            out = translate_bytes(data, Path(input_file), fmt, job, lang, target)
        finally:
            job.close()
    atomic_write_bytes(output_file, out)
    if journal is not None:
        journal.unlink(missing_ok=True)
