"""Tests for translator.data.prepare: the prepared (memory-mapped) training data gives the
same batches as the in-memory path, is reused while current and rebuilt when not, and is
never left half-written by a crash, a full disk or two prepares at once."""

from __future__ import annotations

import errno
import json
import logging
import re

import numpy as np
import pytest
import torch
from corpora import PAIRS, config, corpus_folder, write, write_jsonl_layout, write_saved_layout

from translator.data import npyfile
from translator.data import prepare as prep
from translator.data.batching import TokenBatches
from translator.data.corpus import load_corpus
from translator.data.stream import BatchStream
from translator.data.tokenizer import Tokenizer
from translator.errors import UserError


def test_prepared_batches_are_the_in_memory_batches(tmp_path, monkeypatch):
    monkeypatch.setattr(prep, "CHUNK", 70)  # several chunks, on two worker processes
    extra = [("  Ein Hund läuft.  ", "A dog runs."), ("", "empty"), ("x " * 120, "long")]
    cfg = config(tmp_path, corpus_folder(tmp_path / "d", extra))
    data = prep.prepare(cfg)
    # the in-memory path: the cleaned pairs as Python lists, tokenized in this process
    corpus = load_corpus(cfg.data, cfg.seed)
    tokenizer = Tokenizer.train(corpus.train, cfg.tokenizer, cfg.seed)
    assert tokenizer.fingerprint() == data.tokenizer.fingerprint()
    src = tokenizer.encode_src([s for s, _ in corpus.train])
    tgt = tokenizer.encode_tgt([t for _, t in corpus.train])
    in_memory = TokenBatches(src, tgt, 300, seed=1)
    mapped = TokenBatches(data.ids, None, 300, seed=1)
    assert len(mapped) == len(corpus.train) == 400 + 1
    assert data.manifest["counts"] == {
        "read": 403, "empty": 1, "too_long": 1, "ratio": 0, "duplicate": 0
    }  # fmt: skip
    # the ids are the mapped files themselves, not a copy in memory
    assert len(data.ids.maps) == 5 and data.ids.src.dtype == np.uint16
    assert not data.ids.src.flags.owndata and not data.ids.src.flags.writeable
    before = data.ids.collate([0, 5, 9]).src
    data.ids.release()  # dropping the touched pages loses nothing
    assert torch.equal(data.ids.collate([0, 5, 9]).src, before)
    for epoch in (0, 1):
        assert mapped.epoch(epoch) == in_memory.epoch(epoch)
        for rows in mapped.epoch(epoch)[:8]:
            a, b = mapped.collate(rows), in_memory.collate(rows)
            assert torch.equal(a.src, b.src) and torch.equal(a.tgt_in, b.tgt_in)
            assert torch.equal(a.tgt_out, b.tgt_out) and a.n_tokens == b.n_tokens
    assert data.dev == PAIRS["dev"]


def test_current_data_is_reused_and_changed_data_prepared_again(tmp_path, caplog):
    folder = corpus_folder(tmp_path / "d")
    cfg = config(tmp_path, folder)
    first = prep.prepare(cfg)
    made = (first.folder / "manifest.json").stat().st_mtime_ns
    again = prep.prepare(cfg)
    assert again.folder == first.folder
    assert (again.folder / "manifest.json").stat().st_mtime_ns == made
    # another cleaning rule, or an edited corpus file: another prepared folder
    assert prep.prepare(config(tmp_path, folder, max_words=8)).folder != first.folder
    write(folder / "train.en", [en for _, en in PAIRS["train"][:-1]] + ["Something else."])
    changed = prep.prepare(cfg)
    assert changed.folder != first.folder
    assert changed.manifest["pairs"] == 400


def test_other_test_files_leave_the_prepared_training_data_as_it_is(tmp_path):
    """Training never reads the test split: an edited test file, another test split of the
    folder or test files of their own reuse the prepared data instead of preparing it again."""
    folder = corpus_folder(tmp_path / "d")
    first = prep.prepare(config(tmp_path, folder))
    made = (first.folder / "manifest.json").stat().st_mtime_ns
    write(folder / "test.en", ["Something else."] * len(PAIRS["test"]))
    write(folder / "test_2017.de", ["Ein Hund."])
    write(folder / "test_2017.en", ["A dog."])
    own = {"src": str(folder / "test_2017.de"), "tgt": str(folder / "test_2017.en")}
    for data in ({}, {"test_split": "test_2017"}, {"test": own}):
        again = prep.prepare(config(tmp_path, folder, **data))
        assert again.folder == first.folder, data
        assert (again.folder / "manifest.json").stat().st_mtime_ns == made
    # the same holds for training files named one by one, whose test files change
    names = lambda stem: {"src": str(folder / f"{stem}.de"), "tgt": str(folder / f"{stem}.en")}  # noqa: E731
    files = {"dir": None, "train": names("train"), "dev": names("val")}
    alone = prep.prepare(config(tmp_path, None, **files, test=names("test")))
    again = prep.prepare(config(tmp_path, None, **files, test=names("test_2017")))
    assert again.folder == alone.folder
    # while an edited dev file is data of its own
    write(folder / "val.en", ["Another dog."] * len(PAIRS["dev"]))
    assert prep.prepare(config(tmp_path, folder)).folder != first.folder


@pytest.mark.parametrize("damage", ["flip", "truncate", "version", "manifest", "mangled"])
def test_a_damaged_or_foreign_folder_is_rebuilt(tmp_path, damage, caplog):
    cfg = config(tmp_path, corpus_folder(tmp_path / "d"), prepared_dir=str(tmp_path / "p"))
    first = prep.prepare(cfg)
    ids = np.array(first.ids.src)
    path = tmp_path / "p" / "src.npy"
    if damage == "flip":
        data = bytearray(path.read_bytes())
        data[-3] ^= 0x01
        path.write_bytes(bytes(data))
    elif damage == "truncate":
        path.write_bytes(path.read_bytes()[:-100])
    else:
        manifest = json.loads((tmp_path / "p" / "manifest.json").read_text())
        if damage in ("version", "mangled"):
            if damage == "version":
                manifest["format"] = prep.FORMAT + 1
            else:  # an entry without its size, as a hand edit could leave it
                del manifest["files"]["src.npy"]["bytes"]
            (tmp_path / "p" / "manifest.json").write_text(json.dumps(manifest))
        else:
            (tmp_path / "p" / "manifest.json").write_text("{not json")
    assert prep.check_prepared(tmp_path / "p", first.manifest["key"])[0] is None
    with caplog.at_level(logging.INFO, logger="translator"):
        again = prep.prepare(cfg)
    assert "preparing it again" in caplog.text
    assert np.array_equal(np.array(again.ids.src), ids)
    assert not list(tmp_path.glob(".p.tmp-*"))


def test_a_crash_while_preparing_leaves_nothing_a_later_run_trusts(tmp_path, monkeypatch):
    cfg = config(tmp_path, corpus_folder(tmp_path / "d"), prepared_dir=str(tmp_path / "p"))
    real = npyfile.Writer.close

    def crash(self):
        if self.path.name == "cost.npy":
            raise KeyboardInterrupt  # as if killed in the middle of writing
        real(self)

    monkeypatch.setattr(npyfile.Writer, "close", crash)
    with pytest.raises(KeyboardInterrupt):
        prep.prepare(cfg)
    assert not (tmp_path / "p").exists() and not list(tmp_path.glob(".p.tmp-*"))
    monkeypatch.setattr(npyfile.Writer, "close", real)
    assert prep.prepare(cfg).manifest["pairs"] == 400


def test_a_full_disk_is_one_line_and_leaves_no_half_dataset(tmp_path, monkeypatch):
    cfg = config(tmp_path, corpus_folder(tmp_path / "d"), prepared_dir=str(tmp_path / "p"))

    def full(self, values):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(npyfile.Writer, "append", full)
    with pytest.raises(UserError) as err:
        prep.prepare(cfg)
    assert "No space left on device" in str(err.value) and "\n" not in str(err.value)
    assert not (tmp_path / "p").exists() and not list(tmp_path.glob(".p.tmp-*"))


def test_dedupe_and_length_ratio_drop_pairs_and_count_them(tmp_path):
    first = PAIRS["train"][0]
    extra = [first, first, ("Ja.", "Yes, " * 30)]
    cfg = config(tmp_path, corpus_folder(tmp_path / "d", extra), dedupe=True, max_len_ratio=3.0)
    data = prep.prepare(cfg)
    counts = data.manifest["counts"]
    repeats_in_demo = len(PAIRS["train"]) - len(set(PAIRS["train"]))
    assert counts["duplicate"] == 2 + repeats_in_demo
    assert counts["ratio"] >= 1
    assert data.manifest["pairs"] == 403 - counts["duplicate"] - counts["ratio"]
    # the kept pairs are exactly the first of each, within the ratio
    rows = [data.ids.src[data.ids.src_offsets[i] : data.ids.src_offsets[i + 1]] for i in range(3)]
    src = data.tokenizer.encode_src([s for s, _ in PAIRS["train"][:3]])
    assert [r.tolist() for r in rows] == src
    for i in range(len(data.ids)):
        s, t = data.ids.lengths(np.array([i]))
        assert max(s - 1, t - 2) <= 3.0 * min(s - 1, t - 2)


@pytest.mark.parametrize("streaming", [False, True])
def test_datasets_are_prepared_like_files(hf, tmp_path, streaming):  # noqa: F811
    """A save_to_disk folder (data.dir) and a dataset that load_dataset reads, streamed or
    not (data.dataset: the hub's code path, on a local folder), prepare the same ids."""
    saved = write_saved_layout(hf, tmp_path / "saved", "translation")
    by_dir = prep.prepare(config(tmp_path, saved, max_words=6))
    assert by_dir.manifest["pairs"] == 3
    hub = write_jsonl_layout(tmp_path / "hub", "translation", ("train", "val", "test"))
    cfg = config(tmp_path, None, dataset=str(hub), streaming=streaming, max_words=6)
    by_name = prep.prepare(cfg)
    assert by_name.manifest["identity"]["corpus"]["streaming"] is streaming
    assert by_name.tokenizer.fingerprint() == by_dir.tokenizer.fingerprint()
    for name in ("src", "tgt", "src_offsets", "tgt_offsets"):
        assert np.array_equal(getattr(by_name.ids, name), getattr(by_dir.ids, name))
    assert by_name.dev == by_dir.dev


def test_an_epoch_with_fewer_batches_than_processes_is_a_user_error(tmp_path):
    batches = TokenBatches([[5, 3]] * 3, [[2, 6, 3]] * 3, 2, seed=1)  # 3 batches of 1
    assert len(batches.plan(0)) == 3
    stream = BatchStream(batches, 0, 0, rank=0, world=4)
    with pytest.raises(UserError, match="fewer batches than the 4 processes"):
        stream.next()


def test_the_stream_resumes_at_the_exact_batch_and_stops_its_thread():
    src = [[4 + i % 7] * (1 + i % 5) + [3] for i in range(60)]
    tgt = [[2] + [5] * (1 + i % 4) + [3] for i in range(60)]
    batches = TokenBatches(src, tgt, 20, seed=2)
    n0 = len(batches.plan(0))
    stream = BatchStream(batches, 0, 0)
    seen = [stream.next() for _ in range(n0 + 3)]
    stream.close()
    assert not stream._thread.is_alive()
    assert [i.epoch for i in seen] == [0] * n0 + [1] * 3
    assert [i.batch.src.tolist() for i in seen[:n0]] == [
        batches.collate(rows).src.tolist() for rows in batches.epoch(0)
    ]
    resumed = BatchStream(batches, 0, n0 - 1)  # as saved after n0 - 1 batches
    for expected in seen[n0 - 1 :]:
        got = resumed.next()
        assert (got.epoch, got.index) == (expected.epoch, expected.index)
        assert torch.equal(got.batch.tgt_out, expected.batch.tgt_out)
    resumed.close()


GOOD_MANIFEST = {
    "format": 1,
    "key": "k",
    "pairs": 3,
    "tokenizer": {"sha256": "ab"},
    "files": {"src.npy": {"bytes": 10, "sha1": "cd"}},
}


@pytest.mark.parametrize(
    "path, value",
    [
        ((), []),
        (("files",), ["src.npy"]),
        (("files", "src.npy"), {"sha1": "cd"}),
        (("files", "src.npy", "bytes"), -1),
        (("files", "src.npy", "bytes"), True),
        (("files", "src.npy", "sha1"), None),
        (("files", "../src.npy"), {"bytes": 1, "sha1": "x"}),
        (("pairs",), "3"),
        (("tokenizer",), "ab"),
        (("key",), 7),
    ],
)
def test_a_manifest_of_another_shape_is_named_not_trusted(path, value):
    """Each field `check_prepared` reads is checked for its type first: a mangled manifest
    makes the folder stale (rebuilt), never a KeyError or TypeError."""
    from translator.data.prepared import manifest_problem

    assert manifest_problem(GOOD_MANIFEST) is None
    manifest = json.loads(json.dumps(GOOD_MANIFEST))
    if not path:
        manifest = value
    else:
        *parents, last = path
        node = manifest
        for key in parents:
            node = node[key]
        node[last] = value
    assert manifest_problem(manifest) is not None


@pytest.mark.parametrize(
    "key, src, tgt, needle",
    [
        ("dev", "Ein Hund.\nEine Katze.\n", "A dog.\n", "line counts differ"),
        ("dev", "", "", "the dev split is empty"),
        ("test", "Ein Hund.\n", "A caf\xe9.\n".encode("latin-1"), "test.en:1: not valid UTF-8"),
        ("test", "Ein Hund.\n", None, "data.test.tgt: file not found"),
    ],
)
def test_mistakes_in_the_dev_and_test_files_are_named_before_preparing(
    tmp_path, monkeypatch, caplog, key, src, tgt, needle
):
    """The small splits are read first: a mistake in them costs no preparing of the training
    split (minutes on a large corpus) and no training before the test split is scored."""
    from types import SimpleNamespace

    from translator.train import feed

    monkeypatch.setattr(feed, "prepare", lambda *a: pytest.fail("the training split was prepared"))
    folder = corpus_folder(tmp_path / "d")
    own = tmp_path / "own"
    own.mkdir()
    (own / f"{key}.de").write_text(src, encoding="utf-8")
    if tgt is not None:
        data = tgt if isinstance(tgt, bytes) else tgt.encode("utf-8")
        (own / f"{key}.en").write_bytes(data)
    cfg = config(
        tmp_path, folder, **{key: {"src": str(own / f"{key}.de"), "tgt": str(own / f"{key}.en")}}
    )
    if key == "dev":
        with pytest.raises(UserError, match=needle):
            feed.TrainingData(cfg, SimpleNamespace(local_rank=0), None, pin=False)
        return
    # the test split, which training never reads: named in a warning, and preparing goes on
    with caplog.at_level(logging.WARNING), pytest.raises(_Prepared):
        monkeypatch.setattr(feed, "prepare", _prepared)
        feed.TrainingData(cfg, SimpleNamespace(local_rank=0), None, pin=False)
    assert re.search(needle, caplog.text) and "training goes on" in caplog.text, caplog.text


class _Prepared(Exception):
    """Raised where the training split would be prepared: the checks before it passed."""


def _prepared(*args):
    raise _Prepared
