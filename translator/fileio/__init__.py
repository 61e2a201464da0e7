"""Files that appear whole or not at all.

A file is written to a temporary file in the target's folder (same filesystem,
so the rename is atomic), fsynced and renamed over the target, so a crash at any
moment leaves either the old file or the new one, never half of one. A new file gets
the usual mode (0666 less the umask), not mkstemp's private 0600; a file replaced keeps
its own.

A symbolic link stays a link: the file it points to is the one written. A path that
names no regular file (a device such as /dev/null, a FIFO) is written through in place,
since a rename would replace it by a file; one that names an open descriptor
(/dev/stdout, /dev/fd/N) is written through that descriptor, so a shell's redirection
to a file keeps what is there and what comes after.
"""

from __future__ import annotations

import contextlib
import errno
import glob
import hashlib
import os
import re
import shutil
import signal
import stat
import sys
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import IO

from translator.errors import FileProblem, UserError

_UMASK = os.umask(0)
os.umask(_UMASK)


# The file system refused: the user's disk, quota or permissions, not a bug.
_REFUSED = {errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EROFS, errno.EACCES, errno.EPERM}
_HINT = "check free disk space and that the folder is writable"
# Paths no file system takes: the user's to change, not a bug.
_BAD_PATH = {
    errno.ENAMETOOLONG: "the name is too long for the file system",
    errno.ENOTDIR: "a part of the path is a file, not a folder",
    errno.ELOOP: "too many symbolic links in the path",
}


def refusal(err: BaseException, unnamed: str | None = None) -> UserError | None:
    """The one-line error for an OSError by which the file system refused a named file (a
    full disk, a read-only folder, no permission), or one without a name where `unnamed`
    says what was written (standard output); None for any other exception."""
    name = err.filename if isinstance(err, OSError) and err.filename is not None else unnamed
    if not isinstance(err, OSError) or name is None:
        return None
    if err.errno in _REFUSED:
        return UserError(f"{name}: {err.strerror}", _HINT)
    if err.errno in _BAD_PATH:
        return UserError(f"{name}: {_BAD_PATH[err.errno]}")
    if err.errno == errno.EEXIST and os.path.isfile(name):  # a folder to make where a file is
        return UserError(f"{name} is a file, where a folder is needed")
    return None


def cannot_create(err: OSError, path: str | Path) -> UserError:
    """The one-line error for a file translator makes beside an output (a journal, a lock)
    that the file system would not create: `refusal`'s where it has one."""
    problem = refusal(err)
    if problem is not None:
        return FileProblem(problem.message, problem.hint)
    return FileProblem(
        f"cannot write {path}: {err.strerror}",
        "a translation keeps its journal beside its output; choose another --output",
    )


class Busy(Exception):
    """Another process holds the lock `locked` asked for."""


def locked(path: str | Path, flags: int = os.O_RDONLY) -> int | None:
    """A descriptor of `path` (opened with `flags`) holding an exclusive lock, taken without
    waiting; Busy where another process holds it; None where the platform or the file
    system keeps no locks (concurrent writers are then the user's to avoid)."""
    try:
        import fcntl
    except ImportError:
        return None
    fd = os.open(path, flags, 0o666)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as err:
        os.close(fd)
        if err.errno in (errno.EAGAIN, errno.EWOULDBLOCK, errno.EACCES):
            raise Busy(str(path)) from None
        return None
    return fd


def usual_mode(path: str | Path) -> None:
    """Give a file another library wrote (perhaps through mkstemp, 0600) the mode a new file
    gets: 0666 less the umask, so that other users and services can read it as usual."""
    os.chmod(path, 0o666 & ~_UMASK)


def readable_file(path: str | Path) -> Path:
    """`path` if it is a file, else a UserError naming it."""
    path = Path(path)
    if path.is_dir():
        raise UserError(f"{path} is a folder; give the name of a file to read")
    if not path.is_file():
        if stream_target(path):  # (such as <(...): a pipe reads once, and files are read twice)
            raise UserError(f"{path} is a pipe or a device, not a file; save it to a file first")
        raise UserError(f"file not found: {path}")
    return path


def writable_file(path: str | Path) -> Path:
    """`path` if a file can be written there, else a UserError naming it: checked before the
    work whose result goes there, so a mistyped path costs no decoding."""
    path = Path(path)
    if path.is_dir():
        raise UserError(f"{path} is a folder; give the name of a file to write")
    folder = path.parent
    if not folder.is_dir():
        problem = "is not a folder" if folder.exists() else "does not exist"
        raise UserError(f"cannot write {path}: {folder} {problem}")
    return path


def descriptor(path: str | Path) -> int | None:
    """The open file descriptor `path` names (/dev/stdout, /dev/fd/N, /proc/self/fd/N), or
    None. Written through a copy of it, a redirection's file keeps what it holds and its
    place: opening the path anew would truncate that file, and a rename replace it."""
    found = _DESCRIPTOR.fullmatch(os.path.abspath(path))
    if found is None:
        return None
    std, fd, pid, pid_fd = found.groups()
    if std is not None:
        return ("in", "out", "err").index(std)
    if fd is not None:
        return int(fd)
    return int(pid_fd) if pid in ("self", str(os.getpid())) else None


_DESCRIPTOR = re.compile(r"/dev/std(in|out|err)|/dev/fd/(\d+)|/proc/(self|\d+)/fd/(\d+)")


def written_through(path: str | Path) -> bool:
    """Whether an output `path` is written in place, with nothing beside it to resume from:
    an open descriptor, a device or a FIFO."""
    return descriptor(path) is not None or stream_target(path)


def stream_target(path: str | Path) -> bool:
    """Whether `path` (its link followed) names something other than a regular file or a
    folder: a device or a FIFO, written through in place (module docstring)."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return False
    return not (stat.S_ISREG(mode) or stat.S_ISDIR(mode))


def real_target(path: str | Path) -> Path:
    """The file a symbolic link `path` points to (the link itself stays); `path` else."""
    path = Path(path)
    return Path(os.path.realpath(path)) if path.is_symlink() else path


@contextlib.contextmanager
def _through(path: Path, mode: str, encoding: str | None) -> Iterator[IO]:
    """`path` (a descriptor, a device, a FIFO) written in place; an OSError names it."""
    fd = descriptor(path)
    if fd is not None:
        for stream in (sys.stdout, sys.stderr):  # what was printed before comes first
            stream.flush()
    try:
        with (open(path, mode, encoding=encoding) if fd is None else
              os.fdopen(os.dup(fd), mode, encoding=encoding)) as f:  # fmt: skip
            yield f
    except OSError as err:
        if err.filename is None:
            err.filename = str(path)
        raise


def _temporary(path: Path) -> tuple[int, str]:
    """A new temporary file beside `path` (descriptor, name), or a UserError naming `path`.
    Its name holds this process's id, so that the next write of `path` removes those of
    writers that were killed (`_drop_orphans`)."""
    try:
        return tempfile.mkstemp(
            prefix=f".{path.name}.{os.getpid()}-", suffix=".tmp", dir=path.parent
        )
    except OSError as err:
        hint = _HINT if err.errno in _REFUSED else None
        raise UserError(f"cannot write {path}: {err.strerror or err}", hint) from None


def _drop_orphans(path: Path) -> None:
    """The temporary files (or scratch folders, named alike) of `path` whose writers are
    gone (killed mid-write): a checkpoint-sized file each, which nothing else would ever
    remove."""
    for tmp in path.parent.glob(f".{glob.escape(path.name)}.*-*.tmp"):
        pid = tmp.name[len(path.name) + 2 :].split("-", 1)[0]
        if pid.isdigit() and not running(int(pid)):
            if tmp.is_dir() and not tmp.is_symlink():
                shutil.rmtree(tmp, ignore_errors=True)
                continue
            with contextlib.suppress(OSError):
                tmp.unlink()


def running(pid: int) -> bool:
    """Whether process `pid` exists on this machine."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # (another user's process: alive)
        return True
    return True


def creatable_file(path: str | Path) -> Path:
    """writable_file, and a file can be made beside it now (a temporary one, made and
    removed): a read-only or foreign file system is named before the work, not after."""
    path = writable_file(path)
    if not written_through(path):
        fd, tmp = _temporary(real_target(path))
        os.close(fd)
        os.unlink(tmp)
    return path


@contextlib.contextmanager
def atomic_open(
    path: str | Path, mode: str = "wb", encoding: str | None = None, *, renames=None
) -> Iterator[IO]:
    """A file object to write `path` through; the target changes only when the block ends
    without an exception (an exception, Ctrl-C included, removes the temporary file). An
    OSError of the writing names `path`, not the temporary file. A device or FIFO is
    written in place, a link's file replaced (module docstring). Given a list `renames`,
    the written file's (temporary, target) pair goes there for `atomic_files` to rename."""
    if written_through(path):
        with _through(Path(path), mode, encoding) as f:
            yield f
        return
    path = writable_file(real_target(path))
    _drop_orphans(path)
    fd, tmp = _temporary(path)
    try:
        # a file replaced keeps its mode (a read-only checkpoint `calibrate` rewrites)
        os.chmod(tmp, stat.S_IMODE(path.stat().st_mode) if path.is_file() else 0o666 & ~_UMASK)
        with os.fdopen(fd, mode, encoding=encoding) as f:
            yield f
            f.flush()
            os.fsync(f.fileno())
        if renames is not None:
            renames.append((tmp, path))
            return
        os.replace(tmp, path)
    except BaseException as err:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        if isinstance(err, OSError) and err.filename in (None, tmp):
            err.filename, err.filename2 = str(path), None
        raise
    _fsync_folder(path.parent)


@contextlib.contextmanager
def atomic_files(*specs: tuple[str | Path | None, str, str | None]) -> Iterator[list]:
    """Files that change together, each (path, mode, encoding) written as `atomic_open`
    writes one (a None path gives None): no target changes unless every file is written,
    Ctrl-C and SIGTERM wait until the renames are made, and a failed rename undoes those
    made before it, so a parallel corpus never pairs new lines with old ones."""
    renames: list[tuple[str, Path]] = []
    try:
        with contextlib.ExitStack() as stack:
            yield [None if path is None else stack.enter_context(
                atomic_open(path, mode, encoding, renames=renames))
                for path, mode, encoding in specs]  # fmt: skip
        _rename_together(renames)
    except BaseException:
        for tmp, _ in renames:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
        raise


def _rename_together(renames: list[tuple[str, Path]]) -> None:
    """Each temporary file over its target, all or none: a target replaced is kept as a
    hard link (named as a temporary file, which `_drop_orphans` removes should the
    process be killed here) until every rename is made. Ctrl-C and SIGTERM are noted
    meanwhile and handled after the last rename (in the main thread, where Python runs
    signal handlers; a mask would not do, as the kernel hands a signal to any thread)."""
    caught: list[int] = []
    held = (signal.SIGINT, signal.SIGTERM)
    main = threading.current_thread() is threading.main_thread()
    before = {s: signal.signal(s, lambda n, _: caught.append(n)) for s in held} if main else {}
    made: list[tuple[Path, str | None]] = []
    try:
        for tmp, path in renames:
            made.append((path, _kept_copy(path)))  # (before: an undone rename is harmless)
            os.replace(tmp, path)
    except BaseException as err:
        for path, old in reversed(made):
            with contextlib.suppress(OSError):
                os.replace(old, path) if old is not None else os.unlink(path)
        if isinstance(err, OSError) and err.filename is not None:
            named = next((str(p) for t, p in renames if t == err.filename), None)
            if named is not None:
                err.filename, err.filename2 = named, None
        raise
    finally:
        for _, old in made:
            if old is not None:
                with contextlib.suppress(OSError):
                    os.unlink(old)
        for signum, handler in before.items():
            signal.signal(signum, handler)
    for folder in {path.parent for _, path in renames}:
        _fsync_folder(folder)
    for signum in caught[:1]:  # (as it would have been handled when it came)
        handler = before[signum]
        if callable(handler):
            handler(signum, None)
        elif handler == signal.SIG_DFL:
            os.kill(os.getpid(), signum)


def _kept_copy(path: Path) -> str | None:
    """A hard link to the file at `path` for `_rename_together` to restore, or None where
    there is none (no file, or a file system without hard links)."""
    if not path.is_file():
        return None
    old = f"{path.parent}/.{path.name}.{os.getpid()}-old.tmp"
    try:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(old)
        os.link(path, old)
    except OSError:
        return None
    return old


def atomic_write_bytes(path: str | Path, data: bytes) -> None:
    with atomic_open(path, "wb") as f:
        f.write(data)


def _fsync_folder(folder: Path) -> None:
    """Make the rename itself durable (where the platform lets a folder be fsynced)."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def file_digest(path: str | Path, algorithm: str = "sha256") -> str:
    """The hex digest of a file's bytes, read in blocks."""
    with open(path, "rb") as f:
        return hashlib.file_digest(f, algorithm).hexdigest()
