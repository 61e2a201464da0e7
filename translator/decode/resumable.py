"""`translate --input F --output G` on files of any size, resumable.

The input is read a chunk of lines at a time. Each chunk's translations are appended to
G.partial and made durable (fsync) before G.partial.json records how many input lines and
output bytes are done. A run that stops (Ctrl-C, a crash, a lost machine) leaves both; the
same command run again finds them, cuts G.partial back to the recorded bytes (a chunk
written after the last record is dropped, so no line is doubled) and continues with the
next input line. Inside a chunk, each finished batch is kept in G.partial.batches
(decode/journal.py), so a stop loses at most one batch's work. When all is done G.partial
becomes G by rename, so G is never half written. The record also holds what the
translations depend on (the input file's size and time, the model, the decoding settings);
a run that differs in any of them starts over.

With --sampling, each chunk draws from its own seed (--seed plus the chunk's number:
translate_io.chunk_request), so a resumed run writes what an uninterrupted one would, and
what the same file gives on standard output. Such a chunk is resumed whole, since its
batches draw one after another from the chunk's stream.
"""

from __future__ import annotations

import contextlib
import io
import json
import logging
import os
from pathlib import Path

from translator.data.readers import chunked, iter_lines
from translator.decode import translate_io
from translator.decode.journal import Journal
from translator.decode.translate_io import write_translations
from translator.errors import UserError
from translator.fileio import (
    Busy,
    atomic_open,
    atomic_write_bytes,
    cannot_create,
    locked,
    real_target,
    writable_file,
    written_through,
)
from translator.fileio.outputs import MARKER, owned
from translator.progress import progress_bar

log = logging.getLogger(__name__)


def file_stamp(path: str | Path) -> list:
    """What identifies a file's version cheaply: its path, size and modification time."""
    path = Path(path)
    st = path.stat()
    return [str(path.resolve()), st.st_size, st.st_mtime_ns]


def folder_stamp(path: str | Path) -> list:
    """What identifies an exported folder's version: its path and the name, size and time of
    each file the export wrote (its output marker lists them; a folder without one: every
    file). An export written anew in place holds new files, so the stamp changes with the
    model, and not with a file written beside them (a translation and its .partial files)."""
    folder = Path(path).resolve()
    listed = owned(folder)
    files = sorted(p for p in folder.rglob("*") if p.is_file() and p.name != MARKER and
                   (listed is None or p.relative_to(folder).parts[0] in listed))  # fmt: skip
    return [str(folder), [[str(p.relative_to(folder)), *file_stamp(p)[1:]] for p in files]]


def model_stamps(paths) -> list:
    """What identifies the models a job translates with: checkpoint files' and exported
    folders' stamps."""
    return [file_stamp(p) if Path(p).is_file() else folder_stamp(p) for p in paths]


def stopped_files(output_file: Path) -> tuple[Path, Path, Path]:
    """G.partial, G.partial.json and G.partial.batches, which a stopped translation into G
    leaves."""
    return tuple(output_file.with_name(output_file.name + end)
                 for end in (".partial", ".partial.json", ".partial.batches"))  # fmt: skip


def _refuse_foreign(partial: Path, record: Path, batches: Path) -> None:
    """G.partial, G.partial.json and G.partial.batches are replaced only where the record is
    one translator wrote (a stopped run's): files of those names without it are the user's."""
    if not (partial.exists() or record.exists() or batches.exists()):
        return
    try:
        saved = json.loads(record.read_text(encoding="utf-8"))
        ours = isinstance(saved, dict) and "identity" in saved
    except (OSError, ValueError):
        ours = False
    if not ours:
        found = next(p for p in (partial, record, batches) if p.exists())
        raise UserError(
            f"{found} exists and is not a stopped translation of translator's; refusing to "
            "replace it",
            "move it away or give another --output",
        )


@contextlib.contextmanager
def _held(output_file: Path):
    """G.partial.lock held while translating into G: a second translation into the same
    file is refused (the two would write one file and record each other's lines)."""
    lock = output_file.with_name(output_file.name + ".partial.lock")
    while True:
        try:
            fd = locked(lock, os.O_RDWR | os.O_CREAT)
        except Busy:
            raise UserError(
                f"{output_file} is being written by another translation",
                "wait for it to finish, or give this one another --output",
            ) from None
        except OSError as err:
            raise cannot_create(err, lock) from None
        if fd is None:  # no file locks here
            yield
            return
        if not os.fstat(fd).st_size and os.fstat(fd).st_ino == _inode(lock):
            break
        os.close(fd)  # a file of the user's, or one the holder removed as it finished
        if _inode(lock) is not None and lock.stat().st_size:
            raise UserError(f"{lock} exists and is not translator's; refusing to use it")
    try:
        yield
    finally:
        lock.unlink(missing_ok=True)  # (while held: the next run makes its own)
        os.close(fd)


def _inode(path: Path) -> int | None:
    try:
        return path.stat().st_ino
    except FileNotFoundError:
        return None


def _done(record: Path, partial: Path, identity: dict) -> tuple[int, int]:
    """(input lines, output bytes) an earlier run of the same job finished; (0, 0) if none."""
    if not (record.is_file() and partial.is_file()):
        return 0, 0
    try:
        saved = json.loads(record.read_text(encoding="utf-8"))
        lines, size = int(saved["lines"]), int(saved["bytes"])
    except (ValueError, KeyError, TypeError, OSError):
        return 0, 0
    if saved.get("identity") != identity or partial.stat().st_size < size:
        log.info("%s is from another input, model or settings: starting over", partial)
        return 0, 0
    return lines, size


def translate_file(
    translator, input_file: Path, output_file: Path, request, model, guides=None
) -> None:
    """Translate `input_file` into `output_file` (module docstring) as the DecodeRequest
    `request` asks. `model`: what identifies the model (model_stamps of its checkpoints);
    `guides`: each line's prefix and required phrases (line_guides.LineGuides), or None."""
    if written_through(output_file):  # a descriptor, device or FIFO: nothing to resume
        _through_once(translator, input_file, output_file, request, guides)
        return
    output_file = writable_file(real_target(output_file))
    partial, record, batches = stopped_files(output_file)
    sampling = request.sampling
    identity = {
        "input": file_stamp(input_file),
        "model": model,
        "decode": request.decode.to_dict(),
        "nbest": request.nbest,
        "prefix": list(request.source_or(translator.source_prefix)),
        "guides": guides.stamp(file_stamp) if guides else None,
        "sampling": None if sampling is None else repr(sampling),
        "alignments": request.alignments,  # a column more or less
        "confidence": request.confidence,
        "min_confidence": request.min_confidence,
    }
    _refuse_foreign(partial, record, batches)
    with _held(output_file):
        _translate_held(translator, input_file, output_file, request, guides, identity)


def _translate_held(translator, input_file, output_file, request, guides, identity) -> None:
    """translate_file's work, once G.partial.lock is held."""
    partial, record, batches = stopped_files(output_file)
    sampling = request.sampling
    lines, size = _done(record, partial, identity)
    if lines:
        log.info("resuming %s: %d lines were translated before", output_file, lines)
    total = sum(1 for _ in iter_lines(input_file))
    bar = progress_bar(total=total, initial=lines, desc="translate", unit="line")
    try:
        if not lines:  # recorded before G.partial is made: a run stopped at once left both
            state = {"identity": identity, "lines": 0, "bytes": 0}
            atomic_write_bytes(record, json.dumps(state).encode())
        journal = None if sampling is not None else Journal(batches, identity)
        job = (translator, input_file, partial, record, identity, request, guides, journal)
        try:
            _append(*job, lines, size, bar)
        finally:
            if journal is not None:
                journal.close()
    except OSError as err:  # a full disk: named by the output asked for (G.partial is kept)
        if err.filename in (None, str(partial), str(record)):
            err.filename, err.filename2 = str(output_file), None
        raise
    os.replace(partial, output_file)
    batches.unlink(missing_ok=True)  # before the record, which makes it translator's
    record.unlink(missing_ok=True)


def _through_once(translator, input_file, output_file, request, guides) -> None:
    total = sum(1 for _ in iter_lines(input_file))
    bar = progress_bar(total=total, desc="translate", unit="line")
    with bar, atomic_open(output_file, "w", encoding="utf-8") as out:
        chunks = chunked(iter_lines(input_file), translate_io.FILE_CHUNK)
        write_translations(translator, chunks, out, request, bar, guides, per_chunk=True)


def _append(translator, input_file, partial, record, identity, request, guides, journal, lines,
            size, bar):  # fmt: skip
    """Translate the input after its first `lines` lines onto `partial` (cut to `size`
    bytes first), recording each chunk in `record` and, where `journal` is a Journal, each
    batch of the chunk in it."""
    with bar, open(partial, "r+b" if lines else "wb") as raw:
        raw.truncate(size)
        raw.seek(size)
        stream = iter_lines(input_file)
        for _ in range(lines):
            next(stream)
        take = guides.reader(lines) if guides else None  # (one for all chunks: it reads on)
        for chunk in chunked(stream, translate_io.FILE_CHUNK):
            text = io.StringIO()
            shown = bar if journal is None else journal.chunk(lines, bar)
            write_translations(translator, [chunk], text, request, shown, guides, lines, True,
                               take)  # fmt: skip
            raw.write(text.getvalue().encode("utf-8"))
            raw.flush()
            os.fsync(raw.fileno())
            lines, size = lines + len(chunk), raw.tell()
            state = {"identity": identity, "lines": lines, "bytes": size}
            atomic_write_bytes(record, json.dumps(state).encode())
            if journal is not None:  # its batches are recorded: the file stays one chunk long
                journal.clear()
