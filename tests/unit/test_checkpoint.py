"""Tests for translator.models.checkpoint: atomic writes, faithful round trips, and loading that
refuses truncated, foreign and code-carrying files with a one-line UserError."""

from __future__ import annotations

import io
import os
import random
import tempfile
from pathlib import Path

import pytest
import torch
from util import user_error

from translator import __version__
from translator.models.checkpoint import (
    FORMAT,
    Checkpoint,
    atomic_write_bytes,
    load_checkpoint,
    members_key,
    save_checkpoint,
    weights_fingerprint,
)


def files_in(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir())


def payload() -> dict:
    gen = torch.Generator().manual_seed(0)
    return {
        "model": {
            "enc.weight": torch.randn(7, 5, generator=gen),
            "enc.bias": torch.zeros(5, dtype=torch.float16),
            "steps": torch.arange(10, dtype=torch.int64),
            "half": torch.randn(3, generator=gen).to(torch.bfloat16),
            "flags": torch.tensor([True, False]),
        },
        "tokenizer": {"src": bytes(range(256)) * 3, "tgt": None},
        "config": {"train": {"lr": 0.001, "betas": [0.9, 0.98]}, "run_dir": "runs/x"},
        "train_state": {"progress": {"step": 12, "epoch": 1}, "rng": {"python": (3, (1, 2), None)}},
    }


def assert_same(a, b) -> None:
    assert type(a) is type(b), (type(a), type(b))
    if isinstance(a, torch.Tensor):
        assert a.dtype == b.dtype and a.shape == b.shape
        assert torch.equal(a, b)
    elif isinstance(a, dict):
        assert a.keys() == b.keys()
        for key in a:
            assert_same(a[key], b[key])
    elif isinstance(a, (list, tuple)):
        assert len(a) == len(b)
        for x, y in zip(a, b, strict=True):
            assert_same(x, y)
    else:
        assert a == b


# -- round trips and atomic writes ------------------------------------------------------------


def test_save_then_load_round_trips(tmp_path):
    path = tmp_path / "best.pt"
    data = payload()
    save_checkpoint(path, data)
    loaded = load_checkpoint(path)
    assert loaded["format"] == FORMAT and loaded["version"] == __version__
    assert loaded.keys() == {"format", "version", *data}
    for key in data:
        assert_same(data[key], loaded[key])


def test_written_file_is_complete_and_no_temp_files_remain(tmp_path):
    path = tmp_path / "last.pt"
    save_checkpoint(path, payload())
    assert files_in(tmp_path) == ["last.pt"]
    # the file on disk is the whole serialisation, readable by plain torch.load too
    expected = io.BytesIO()
    torch.save({"format": FORMAT, "version": __version__, **payload()}, expected)
    assert path.read_bytes() == expected.getvalue()
    assert torch.equal(torch.load(path, weights_only=True)["model"]["steps"], torch.arange(10))


def test_save_overwrites_an_old_checkpoint(tmp_path):
    path = tmp_path / "last.pt"
    save_checkpoint(path, {"model": {"w": torch.zeros(3)}, "step": 1})
    save_checkpoint(path, {"model": {"w": torch.ones(3)}, "step": 2})
    loaded = load_checkpoint(path)
    assert loaded["step"] == 2 and torch.equal(loaded["model"]["w"], torch.ones(3))
    assert files_in(tmp_path) == ["last.pt"]


def test_atomic_write_bytes_writes_and_replaces(tmp_path):
    path = tmp_path / "f.bin"
    atomic_write_bytes(path, b"first")
    assert path.read_bytes() == b"first"
    atomic_write_bytes(path, b"second, longer")
    assert path.read_bytes() == b"second, longer"
    assert files_in(tmp_path) == ["f.bin"]


class _FailingWrite:
    """A file object that writes half of the data, then fails like a full disk."""

    def __init__(self, f):
        self._f = f

    def write(self, data):
        self._f.write(data[: len(data) // 2])
        self._f.flush()
        raise OSError(28, "No space left on device")

    def __getattr__(self, name):
        return getattr(self._f, name)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self._f.close()


def _fail_write(monkeypatch):
    real_fdopen = os.fdopen
    monkeypatch.setattr(os, "fdopen", lambda *a, **k: _FailingWrite(real_fdopen(*a, **k)))


def _fail_fsync(monkeypatch):
    def fsync(fd):
        raise OSError(5, "Input/output error")

    monkeypatch.setattr(os, "fsync", fsync)


def _fail_replace(monkeypatch):
    def replace(src, dst):
        raise OSError(13, "Permission denied")

    monkeypatch.setattr(os, "replace", replace)


def _interrupt_fsync(monkeypatch):
    def fsync(fd):
        raise KeyboardInterrupt

    monkeypatch.setattr(os, "fsync", fsync)


FAILURES = {
    "write": (_fail_write, OSError),
    "fsync": (_fail_fsync, OSError),
    "replace": (_fail_replace, OSError),
    "interrupt": (_interrupt_fsync, KeyboardInterrupt),
}


@pytest.mark.parametrize("where", sorted(FAILURES))
def test_failed_write_keeps_the_old_file_and_leaves_no_temp_file(tmp_path, monkeypatch, where):
    path = tmp_path / "last.pt"
    path.write_bytes(b"old content")
    patch, exc = FAILURES[where]
    patch(monkeypatch)
    with pytest.raises(exc):
        atomic_write_bytes(path, b"new content " * 1000)
    monkeypatch.undo()
    assert path.read_bytes() == b"old content"
    assert files_in(tmp_path) == ["last.pt"]


def test_failed_save_checkpoint_is_a_user_error_and_keeps_the_old_one(tmp_path, monkeypatch):
    path = tmp_path / "last.pt"
    save_checkpoint(path, {"model": {"w": torch.zeros(2)}, "step": 1})
    _fail_write(monkeypatch)
    message = user_error(save_checkpoint, path, {"model": {"w": torch.ones(2)}, "step": 2})
    monkeypatch.undo()
    assert str(path) in message and "disk space" in message
    assert load_checkpoint(path)["step"] == 1
    assert files_in(tmp_path) == ["last.pt"]


def test_save_into_a_missing_folder_is_a_user_error(tmp_path):
    path = tmp_path / "no" / "such" / "dir" / "last.pt"
    message = user_error(save_checkpoint, path, {"model": {}})
    assert str(path) in message
    assert not (tmp_path / "no").exists()


# -- files that must be refused ---------------------------------------------------------------


def test_missing_file_is_a_user_error(tmp_path):
    path = tmp_path / "nope.pt"
    message = user_error(load_checkpoint, path)
    assert str(path) in message and "not found" in message
    assert str(tmp_path) in user_error(load_checkpoint, tmp_path)  # a folder is not a file


@pytest.mark.parametrize("fraction", [0.0, 0.01, 0.25, 0.5, 0.75, 0.99])
def test_truncated_checkpoint_is_a_user_error(tmp_path, fraction):
    path = tmp_path / "last.pt"
    save_checkpoint(path, payload())
    data = path.read_bytes()
    path.write_bytes(data[: int(len(data) * fraction)])
    message = user_error(load_checkpoint, path)
    assert str(path) in message


def test_truncated_legacy_format_checkpoint_is_a_user_error(tmp_path):
    path = tmp_path / "old.pt"
    buf = io.BytesIO()
    torch.save(
        {"format": FORMAT, "model": payload()["model"]}, buf, _use_new_zipfile_serialization=False
    )
    data = buf.getvalue()
    for cut in range(0, len(data), max(1, len(data) // 40)):
        path.write_bytes(data[:cut])
        assert str(path) in user_error(load_checkpoint, path)


GARBAGE = {
    "empty": b"",
    "text-h": b"hello world\n",  # 'h' is a pickle memo lookup
    "text-q": b"quick notes\n",  # 'q' is a pickle memo store
    "yaml": b"run_dir: runs/x\nseed: 1\n",
    "zeros": bytes(100),
    "zip-magic": b"PK\x03\x04" + bytes(40),
    "pickle-proto": b"\x80\x02" + bytes(range(200, 256)),
}


@pytest.mark.parametrize("name", sorted(GARBAGE))
def test_garbage_file_is_a_user_error(tmp_path, name):
    path = tmp_path / "garbage.pt"
    path.write_bytes(GARBAGE[name])
    assert str(path) in user_error(load_checkpoint, path)


@pytest.mark.filterwarnings("ignore:Detected pickle protocol")
def test_random_bytes_are_always_a_user_error(tmp_path):
    rng = random.Random(1234)
    path = tmp_path / "random.pt"
    for _ in range(200):
        prefix = rng.choice([b"", b"\x80\x02", b"PK\x03\x04"])
        path.write_bytes(prefix + bytes(rng.randrange(256) for _ in range(rng.randrange(1, 64))))
        user_error(load_checkpoint, path)


@pytest.mark.parametrize("content", [torch.ones(3), [1, 2, 3], {"format": FORMAT}, {"model": {}}])
def test_not_a_translator_checkpoint(tmp_path, content):
    path = tmp_path / "other.pt"
    torch.save(content, path)
    message = user_error(load_checkpoint, path)
    assert str(path) in message and "not a translator checkpoint" in message


@pytest.mark.parametrize("other", [FORMAT + 1, FORMAT + 41, 0])
def test_other_format_number_names_both_versions(tmp_path, other):
    path = tmp_path / "future.pt"
    torch.save({"format": other, "version": "9.8.7", "model": {}}, path)
    message = user_error(load_checkpoint, path)
    assert str(path) in message
    assert f"format {other}" in message and f"format {FORMAT}" in message
    assert "9.8.7" in message and __version__ in message


# -- pickled code must never run --------------------------------------------------------------


class ExecPayload:
    """Unpickling this runs Python code that creates the marker file."""

    def __init__(self, marker: Path):
        self.marker = str(marker)

    def __reduce__(self):
        return (exec, (f"open({self.marker!r}, 'w').close()",))


class OpenPayload:
    """Unpickling this calls open(marker, 'w'), which creates the marker file."""

    def __init__(self, marker: Path):
        self.marker = str(marker)

    def __reduce__(self):
        return (open, (self.marker, "w"))


@pytest.mark.parametrize("legacy", [False, True], ids=["zip", "legacy"])
@pytest.mark.parametrize("kind", [ExecPayload, OpenPayload], ids=["exec", "open"])
def test_malicious_pickle_is_refused_without_running(tmp_path, kind, legacy):
    marker = tmp_path / "pwned"
    path = tmp_path / "evil.pt"
    evil = {
        "format": FORMAT,
        "version": __version__,
        "model": {"w": torch.ones(2), "deep": {"x": [kind(marker)]}},
    }
    torch.save(evil, path, _use_new_zipfile_serialization=not legacy)
    assert not marker.exists()

    message = user_error(load_checkpoint, path)
    assert str(path) in message and "refused" in message
    assert not marker.exists(), "load_checkpoint ran code from the checkpoint"

    # The payload is real: an unsafe load does run it.
    loaded = torch.load(path, map_location="cpu", weights_only=False)
    item = loaded["model"]["deep"]["x"][0]
    if hasattr(item, "close"):
        item.close()
    assert marker.exists()


def test_refusal_names_the_offending_global(tmp_path):
    path = tmp_path / "evil.pt"
    torch.save({"format": FORMAT, "model": {}, "x": ExecPayload(tmp_path / "m")}, path)
    message = user_error(load_checkpoint, path)
    assert "exec" in message
    assert not (tmp_path / "m").exists()


def test_temp_file_is_created_next_to_the_target(tmp_path, monkeypatch):
    # temp files go next to the target (same filesystem, so the rename is atomic)
    seen = []
    real_mkstemp = tempfile.mkstemp

    def mkstemp(*args, **kwargs):
        seen.append(kwargs.get("dir"))
        return real_mkstemp(*args, **kwargs)

    monkeypatch.setattr(tempfile, "mkstemp", mkstemp)
    save_checkpoint(tmp_path / "a.pt", {"model": {}})
    assert seen and all(Path(d) == tmp_path for d in seen)


def test_saving_holds_no_copy_of_the_checkpoint_in_memory(tmp_path):
    import tracemalloc

    weights = {"w": torch.ones(4_000_000)}  # 16 MB
    tracemalloc.start()
    try:
        save_checkpoint(tmp_path / "big.pt", {"model": weights})
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 4_000_000, peak  # a serialised copy would be 16 MB or more
    assert torch.equal(load_checkpoint(tmp_path / "big.pt")["model"]["w"], weights["w"])


@pytest.mark.parametrize("name", ["text-h", "yaml", "zeros", "empty"])
def test_a_file_torch_never_wrote_is_named_not_a_checkpoint(tmp_path, name):
    path = tmp_path / "notes.pt"
    path.write_bytes(GARBAGE[name])
    assert "not a checkpoint" in user_error(load_checkpoint, path)


def rng_state(seed: int) -> dict:
    gen = torch.Generator().manual_seed(seed)
    return {"torch": gen.get_state(), "python": random.Random(seed).getstate()}


def test_fields_round_trip_through_the_file(tmp_path):
    ckpt = Checkpoint(
        config={"seed": 3, "train": {"betas": [0.9, 0.98]}},
        tokenizer={"src": b"model bytes", "tgt": None, "sha256": "abc"},
        model={"w": torch.randn(4, 3), "steps": torch.arange(5)},
        progress={"step": 7, "epoch": 1},
        rng=[rng_state(1), rng_state(2)],
        optimizer={"state": {0: {"exp_avg": torch.ones(2)}}, "param_groups": []},
        scaler={"scale": 1.0},
    )
    ckpt.save(tmp_path / "last.pt")
    back = Checkpoint.load(tmp_path / "last.pt")
    assert back.config == ckpt.config and back.tokenizer == ckpt.tokenizer
    assert back.progress == ckpt.progress and back.scaler == ckpt.scaler
    assert all(torch.equal(back.model[k], ckpt.model[k]) for k in ckpt.model)
    assert torch.equal(back.optimizer["state"][0]["exp_avg"], torch.ones(2))
    assert back.processes == 2 and len(back.rng) == 2
    for saved, loaded in zip(ckpt.rng, back.rng, strict=True):
        assert torch.equal(saved["torch"], loaded["torch"]) and saved["python"] == loaded["python"]
    # rank 0's state stays where single-process files always kept it
    raw = load_checkpoint(tmp_path / "last.pt")
    assert raw["format"] == FORMAT
    assert torch.equal(raw["train_state"]["rng"]["torch"], ckpt.rng[0]["torch"])


def test_a_file_in_the_layout_older_versions_wrote_still_loads(tmp_path):
    rng = rng_state(5)
    save_checkpoint(
        tmp_path / "old.pt",
        {
            "config": {"seed": 1},
            "tokenizer": {"src": b"x", "tgt": None},
            "model": {"w": torch.zeros(2)},
            "train_state": {
                "progress": {"step": 4},
                "rng": rng,
                "optimizer": {"state": {}, "param_groups": []},
                "scaler": {},
            },
        },
    )
    ckpt = Checkpoint.load(tmp_path / "old.pt")
    assert ckpt.progress == {"step": 4} and ckpt.optimizer == {"state": {}, "param_groups": []}
    assert len(ckpt.rng) == 1 and torch.equal(ckpt.rng[0]["torch"], rng["torch"])
    assert ckpt.processes is None  # that layout did not say how many processes trained


def test_members_key_tells_weights_apart_in_any_order():
    a = {"w": torch.arange(6, dtype=torch.float32).reshape(2, 3), "b": torch.zeros(0)}
    b = {"w": torch.ones(3, dtype=torch.bfloat16), "b": torch.zeros(0)}
    assert weights_fingerprint(a) == weights_fingerprint({k: v.clone() for k, v in a.items()})
    nudged = {**a, "w": a["w"].clone()}
    nudged["w"][1, 2] += 1e-6
    assert weights_fingerprint(nudged) != weights_fingerprint(a)
    assert weights_fingerprint({**a, "w": a["w"].reshape(3, 2)}) != weights_fingerprint(a)
    assert weights_fingerprint(b) != weights_fingerprint({**b, "w": b["w"].float()})
    assert members_key([a, b]) == members_key([b, a]) != members_key([a, a])


def test_a_full_disk_inside_torch_save_is_one_line_and_keeps_the_old_file(tmp_path, monkeypatch):
    """torch's zip writer raises a RuntimeError while the disk's OSError is handled: the
    error still says the disk is full, and the old checkpoint stays."""
    from translator.models import checkpoint as module

    path = tmp_path / "last.pt"
    module.save_checkpoint(path, {"model": {}})
    before = path.read_bytes()

    def full(obj, f):
        try:
            raise OSError(28, "No space left on device")
        except OSError:
            raise RuntimeError("[enforce fail] unexpected pos")  # noqa: B904 (as torch raises it)

    monkeypatch.setattr(module.torch, "save", full)
    message = user_error(module.save_checkpoint, path, {"model": {}})
    assert message.startswith(f"cannot write checkpoint {path}: No space left on device")
    assert path.read_bytes() == before and sorted(tmp_path.iterdir()) == [path]

    def bug(obj, f):
        raise RuntimeError("bug")

    monkeypatch.setattr(module.torch, "save", bug)
    with pytest.raises(RuntimeError, match="bug"):  # a RuntimeError of another cause is a bug
        module.save_checkpoint(path, {"model": {}})
