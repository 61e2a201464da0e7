"""translator.fileio: whole files or none, with the usual file mode."""

import contextlib
import os
import signal

import pytest

from translator.fileio import atomic_open, atomic_write_bytes


@pytest.fixture
def umask_022():
    old = os.umask(0o022)
    try:
        yield
    finally:
        os.umask(old)


def test_atomic_open_streams_text_and_gives_the_usual_mode(tmp_path, umask_022):
    path = tmp_path / "out.txt"
    with atomic_open(path, "w", encoding="utf-8") as f:
        f.write("eins\n")
        assert not path.exists()  # nothing visible before the block ends
        f.write("zwei ☃\n")
    assert path.read_text(encoding="utf-8") == "eins\nzwei ☃\n"
    assert path.stat().st_mode & 0o777 == 0o644
    atomic_write_bytes(tmp_path / "b.bin", b"x")
    assert (tmp_path / "b.bin").stat().st_mode & 0o777 == 0o644


def test_atomic_open_keeps_the_old_file_when_the_block_fails(tmp_path):
    path = tmp_path / "out.txt"
    path.write_text("old\n")
    with pytest.raises(KeyboardInterrupt), atomic_open(path, "w") as f:
        f.write("half")
        raise KeyboardInterrupt
    assert path.read_text() == "old\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.txt"]


def test_replace_folder_puts_the_new_folder_in_place_and_leaves_nothing_else(tmp_path):
    from translator.fileio.outputs import replace_folder

    target = tmp_path / "data"
    for version in ("old", "new"):
        tmp = tmp_path / f".data.tmp-{version}"
        tmp.mkdir()
        (tmp / "f.txt").write_text(version)
        replace_folder(tmp, target)
        assert (target / "f.txt").read_text() == version
        assert sorted(p.name for p in tmp_path.iterdir()) == ["data"]


def _read_fifo(path, got):
    import threading

    def read():
        with open(path, "rb") as f:
            got.append(f.read())

    reader = threading.Thread(target=read)
    reader.start()
    return reader


def test_a_link_stays_a_link_and_a_fifo_is_written_through(tmp_path):
    """A symbolic link's file is replaced, the link kept; a FIFO (as /dev/stdout or a
    device) is written in place, not replaced by a regular file."""
    real = tmp_path / "real.txt"
    real.write_text("old")
    link = tmp_path / "link.txt"
    link.symlink_to(real)
    atomic_write_bytes(link, b"new")
    assert link.is_symlink() and real.read_bytes() == b"new"
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    got = []
    reader = _read_fifo(fifo, got)
    with atomic_open(fifo, "w", encoding="utf-8") as f:
        f.write("durch\n")
    reader.join(timeout=10)
    assert got == [b"durch\n"]
    assert not fifo.is_file() and fifo.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["link.txt", "pipe", "real.txt"]


def test_a_replaced_file_keeps_its_mode(tmp_path, umask_022):
    path = tmp_path / "model.pt"
    atomic_write_bytes(path, b"one")
    path.chmod(0o440)
    atomic_write_bytes(path, b"two")
    assert path.read_bytes() == b"two" and path.stat().st_mode & 0o777 == 0o440


def test_an_input_that_is_a_pipe_is_named_as_one(tmp_path):
    """Process substitution (<(...)) hands a pipe, which reads once: files are read more than
    once, so it is refused as what it is, not as a file not found."""
    from translator.errors import UserError
    from translator.fileio import readable_file

    fifo = tmp_path / "p"
    os.mkfifo(fifo)
    with pytest.raises(UserError, match="p is a pipe or a device, not a file; save it"):
        readable_file(fifo)
    with pytest.raises(UserError, match="file not found"):
        readable_file(tmp_path / "none")


@pytest.mark.parametrize("name", ["/dev/fd/{}", "/proc/self/fd/{}"])
def test_a_descriptor_is_written_through_keeping_its_file(tmp_path, name):
    """An output named by an open descriptor (`--output /dev/stdout` under `>> log`) goes
    after what its file holds, and what is written there later follows it: neither a
    rename nor a reopening (which truncates) may replace the shell's file."""
    log = tmp_path / "log.txt"
    with open(log, "ab", buffering=0) as shell:
        shell.write(b"header\n")
        path = name.format(shell.fileno())
        atomic_write_bytes(path, b"scores\n")
        with atomic_open(path, "w", encoding="utf-8") as f:
            f.write("more\n")
        shell.write(b"footer\n")
    assert log.read_bytes() == b"header\nscores\nmore\nfooter\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["log.txt"]


def test_a_write_removes_the_temporary_files_of_killed_writers_only(tmp_path):
    """A writer killed mid-write leaves its temporary file; the next write of the same
    file removes it, but not one a running writer (this process) is filling."""
    import subprocess
    import sys

    code = (
        "import os, sys\n"
        "from translator.fileio import atomic_open\n"
        "with atomic_open(sys.argv[1]) as f:\n"
        "    f.write(b'x' * 1000); f.flush(); os._exit(9)\n"  # killed before the rename
    )
    target = tmp_path / "average.pt"
    dead = subprocess.run([sys.executable, "-c", code, str(target)], check=False)
    assert dead.returncode == 9
    orphans = list(tmp_path.glob(".average.pt.*.tmp"))
    assert len(orphans) == 1 and not target.exists()
    scratch = tmp_path / orphans[0].name.replace(".tmp", "x.tmp")  # a killed writer's folder
    (scratch / "ct2").mkdir(parents=True)
    (scratch / "ct2" / "model.bin").write_bytes(b"half")
    live = tmp_path / f".average.pt.{os.getpid()}-abc.tmp"
    live.write_bytes(b"being written")
    other = tmp_path / ".other.pt.1-abc.tmp"  # another file's: not this write's business
    other.write_bytes(b"")
    atomic_write_bytes(target, b"new")
    assert target.read_bytes() == b"new"
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        ["average.pt", live.name, other.name]
    )


def _pair(tmp_path, text):
    paths = tmp_path / "kept.de", tmp_path / "kept.en"
    for path in paths:
        path.write_text(text)
    return paths


def test_atomic_files_change_together_and_a_failed_rename_undoes_the_others(tmp_path, monkeypatch):
    import translator.fileio as fileio

    de, en = _pair(tmp_path, "old\n")
    with fileio.atomic_files((de, "w", None), (en, "w", "utf-8"), (None, "w", None)) as files:
        assert files[2] is None
        files[0].write("neu\n")
        files[1].write("new\n")
        assert de.read_text() == en.read_text() == "old\n"
    assert (de.read_text(), en.read_text()) == ("neu\n", "new\n")
    real = os.replace

    calls = []

    def refused(tmp, path):  # the second rename fails, the first is made
        calls.append(path)
        if len(calls) == 2:
            raise PermissionError(13, "Permission denied", tmp)
        real(tmp, path)

    monkeypatch.setattr(fileio.os, "replace", refused)
    with (
        pytest.raises(PermissionError) as err,
        fileio.atomic_files((de, "w", None), (en, "w", None)) as (a, b),
    ):
        a.write("zwei\n")
        b.write("two\n")
    assert err.value.filename == str(calls[1])  # (not the temporary file's name)
    assert (de.read_text(), en.read_text()) == ("neu\n", "new\n")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["kept.de", "kept.en"]


def test_ctrl_c_during_the_renames_of_atomic_files_waits_for_the_last(tmp_path, monkeypatch):
    import signal

    import translator.fileio as fileio

    de, en = _pair(tmp_path, "old\n")
    real = os.replace

    calls = []

    def interrupted(tmp, path):  # Ctrl-C arrives right after the first rename
        real(tmp, path)
        calls.append(path)
        if len(calls) == 1:
            os.kill(os.getpid(), signal.SIGINT)

    monkeypatch.setattr(fileio.os, "replace", interrupted)
    # (Ctrl-C as Python's own handler takes it: a test runner's worker may ignore SIGINT)
    before = signal.signal(signal.SIGINT, signal.default_int_handler)
    with (
        _restored(signal.SIGINT, before),
        pytest.raises(KeyboardInterrupt),
        fileio.atomic_files((de, "w", None), (en, "w", None)) as (a, b),
    ):
        a.write("neu\n")
        b.write("new\n")
    assert (de.read_text(), en.read_text()) == ("neu\n", "new\n")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["kept.de", "kept.en"]


@contextlib.contextmanager
def _restored(signum, handler):
    try:
        yield
    finally:
        signal.signal(signum, handler)
