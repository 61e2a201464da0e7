"""`translator prepare`: the training split cleaned, tokenized on all cores and written
once as memory-mapped numpy arrays, so that training never holds the corpus as
Python objects and every process maps the same files.

A prepared folder holds, as standard `.npy` files, the flat source ids (each
sentence ending in <eos>) and framed target ids (<bos> .. <eos>), their n+1
offsets and the planning length of each pair; beside them the sentencepiece
model(s), the dev pairs and `manifest.json` (corpus fingerprint, tokenizer
fingerprint, cleaning rules, counts, and the size and SHA-1 of every file).
It is built in a temporary sibling folder and renamed into place, under a
file lock, so a crash or two concurrent prepares never leave a half dataset
that a later run trusts.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import itertools
import json
import logging
import multiprocessing
import os
import random
import time
from collections import deque
from pathlib import Path

import numpy as np

from translator import __version__
from translator.config import Config
from translator.data import npyfile
from translator.data.clean import clean_pairs, empty_after_cleaning
from translator.data.corpus import Pair, Source, open_source
from translator.data.encode import Chunk, Rules, encode_chunk, init_worker
from translator.data.prepared import ARRAYS, FORMAT, Prepared, check_prepared, earlier_prepared
from translator.data.readers import chunked
from translator.data.tokenizer import Tokenizer, cache_dir
from translator.errors import UserError
from translator.fileio import atomic_write_bytes, file_digest
from translator.fileio.outputs import (
    MARKER,
    claim_folder,
    record,
    remove_own_tree,
    replace_folder,
    temporary_folder,
)
from translator.progress import progress_bar

log = logging.getLogger(__name__)

CHUNK = 20_000  # pairs per task for a worker process


def _identity(cfg: Config, source: Source, tokenizer_sha: str | None, symbols=()) -> dict:
    d = cfg.data
    trained = {"config": cfg.tokenizer.model_keys(), "seed": cfg.seed}
    if symbols:
        trained["symbols"] = list(symbols)
    return {
        "format": FORMAT,
        "corpus": source.fingerprint,
        "source": source.description,
        "languages": [d.src_lang, d.tgt_lang],
        "splits": [d.train_split, d.dev_split],
        "cleaning": {
            "max_words": d.max_words,
            "max_len_ratio": d.max_len_ratio,
            "dedupe": d.dedupe,
        },
        "tokenizer": {"sha256": tokenizer_sha} if tokenizer_sha else trained,
    }


def _key(identity: dict) -> str:
    return hashlib.sha256(json.dumps(identity, sort_keys=True).encode()).hexdigest()[:24]


def folder_for(cfg: Config, key: str) -> Path:
    """data.prepared_dir itself; with several training corpora, one folder per corpus in
    it, named by the key as in the cache, so that no corpus replaces another."""
    if cfg.data.prepared_dir:
        if cfg.data.training_corpora():
            return Path(cfg.data.prepared_dir) / key
        return Path(cfg.data.prepared_dir)
    return cache_dir().parent / "prepared" / key


def _claim_parent(cfg: Config, folder: Path) -> None:
    """With several corpora, data.prepared_dir (which holds their folders) made or checked
    to be translator's before its lock file is put there."""
    if cfg.data.prepared_dir and folder != Path(cfg.data.prepared_dir):
        parent = Path(cfg.data.prepared_dir)
        claim_folder(parent, "data.prepared_dir", earlier_prepared, "prepare")
        record(parent, [folder.name], "prepare")


# ---------------------------------------------------------------- building one


def reservoir(source: Source, size: int, seed: int) -> list[Pair]:
    """A uniform sample of the training pairs for sentencepiece (all of them, in order,
    when there are no more than `size`), read as a stream."""
    rng, sample = random.Random(seed), []
    for i, pair in enumerate(progress_bar(source.pairs("train"), desc="sample", unit=" pairs")):
        if i < size:
            sample.append(pair)
        elif (j := rng.randrange(i + 1)) < size:
            sample[j] = pair
    return sample


def _encoded(chunks, workers: int, initargs: tuple):
    """encode_chunk over the chunks, in order: in this process for a single chunk, else
    on `workers` processes with a bounded number of chunks in flight."""
    first, second = next(chunks, None), next(chunks, None)
    if second is None or workers <= 1:
        init_worker(*initargs)
        for chunk in (c for c in (first, second) if c is not None):
            yield encode_chunk(chunk)
        yield from map(encode_chunk, chunks)
        return
    ctx = multiprocessing.get_context("spawn")  # no threads or locks inherited by a fork
    with ctx.Pool(workers, initializer=init_worker, initargs=initargs) as pool:
        pending: deque = deque()
        for chunk in (first, second):
            pending.append(pool.apply_async(encode_chunk, (chunk,)))
        for chunk in chunks:
            pending.append(pool.apply_async(encode_chunk, (chunk,)))
            if len(pending) >= 2 * workers:
                yield pending.popleft().get()
        while pending:
            yield pending.popleft().get()


def _write_split(folder: Path, chunks, dtype) -> tuple[dict, np.ndarray | None]:
    """Append each chunk's arrays to the .npy files; returns the counts and pair hashes."""
    counts = {"read": 0, "empty": 0, "too_long": 0, "ratio": 0}
    hashes = []
    with contextlib.ExitStack() as stack:
        out = {
            name: stack.enter_context(npyfile.Writer(folder / f"{name}.npy", dt))
            for name, dt in zip(ARRAYS, (dtype, np.int64, dtype, np.int64, np.int32))
        }
        ends = {"src": 0, "tgt": 0}
        out["src_offsets"].append(np.zeros(1, np.int64))
        out["tgt_offsets"].append(np.zeros(1, np.int64))
        bar = progress_bar(desc="prepare", unit=" pairs")
        for chunk in chunks:
            for side, tokens, lengths in (
                ("src", chunk.src, chunk.src_lengths),
                ("tgt", chunk.tgt, chunk.tgt_lengths),
            ):
                out[side].append(tokens)
                out[f"{side}_offsets"].append(ends[side] + np.cumsum(lengths))
                ends[side] += int(lengths.sum())
            out["cost"].append(np.maximum(chunk.src_lengths, chunk.tgt_lengths - 1))
            if chunk.hashes is not None:
                hashes.append(chunk.hashes)
            counts["read"] += chunk.read
            for reason, n in chunk.dropped.items():
                counts[reason] += n
            bar.update(chunk.read)
        bar.close()
    return counts, (np.concatenate(hashes) if hashes else None)


def _take(tokens, offsets, rows) -> tuple[np.ndarray, np.ndarray]:
    """The flat ids and lengths of `rows`."""
    starts, lengths = offsets[rows], offsets[rows + 1] - offsets[rows]
    shift = starts - np.concatenate([[0], np.cumsum(lengths)[:-1]])
    return tokens[np.repeat(shift, lengths) + np.arange(int(lengths.sum()))], lengths


def _dedupe(folder: Path, hashes: np.ndarray, dtype) -> int:
    """Keep the first of each repeated pair: rewrite the arrays without the repeats."""
    _, first = np.unique(hashes, return_index=True)
    if len(first) == len(hashes):
        return 0
    rows = np.sort(first)
    old = {name: np.load(folder / f"{name}.npy", mmap_mode="r") for name in ARRAYS}
    new = folder / "dedupe"
    new.mkdir()

    def chunks():
        for r0 in range(0, len(rows), 1 << 17):
            part = rows[r0 : r0 + (1 << 17)]
            src, src_len = _take(old["src"], old["src_offsets"], part)
            tgt, tgt_len = _take(old["tgt"], old["tgt_offsets"], part)
            yield Chunk(src, src_len, tgt, tgt_len, None, 0, {})

    _write_split(new, chunks(), dtype)
    old.clear()  # release the maps of the files about to be replaced
    for name in ARRAYS:
        os.replace(new / f"{name}.npy", folder / f"{name}.npy")
    new.rmdir()
    return len(hashes) - len(first)


def check_tags(sample: list[Pair], symbols, where: str, chosen=None) -> None:
    """A tag must not occur in the text the subword model learns from: sentencepiece would
    cut it out of every word that holds it. `chosen`: the tags the config names (the
    others, target-language tags, cannot be chosen otherwise); all where not given."""
    for src, tgt in sample:
        for tag in symbols:
            if tag in src or tag in tgt:
                said = f"tag {tag!r} occurs in the training text of {where} ({src!r}, {tgt!r})"
                if chosen is not None and tag not in chosen:
                    raise UserError(f"{said}; it is a target-language tag: take it out of the "
                                    "text, or leave those lines out")  # fmt: skip
                raise UserError(f"{said}; choose a tag that does not, such as "
                                f"{free_tag(sample, symbols)}")  # fmt: skip


def free_tag(sample: list[Pair], symbols) -> str:
    """A tag to suggest instead: in no text of `sample`, and neither holding nor held by
    any of `symbols` (sentencepiece would match the one inside the other)."""
    made = (f"<tag{n}>" for n in itertools.count(1))
    return next(
        tag
        for tag in itertools.chain(["<bt>", "<tag>"], made)
        if not any(tag in s or s in tag for s in symbols)
        and not any(tag in src or tag in tgt for src, tgt in sample)
    )


def _build(cfg: Config, source: Source, tmp: Path, identity: dict, tokenizer, symbols) -> None:
    d, start = cfg.data, time.perf_counter()
    if tokenizer is None:
        size = cfg.tokenizer.max_sentences // (2 if cfg.tokenizer.joint else 1)
        sample, dropped = clean_pairs(reservoir(source, max(1, size), cfg.seed), d.max_words)
        if not sample:  # the sample is the whole corpus or a share of it: all dropped
            read = dropped["empty"] + dropped["too_long"]
            raise empty_after_cleaning(source.description, read, dropped, d.max_words)
        check_tags(sample, symbols, source.description, cfg.data.corpus_tags)
        tokenizer = Tokenizer.train(sample, cfg.tokenizer, cfg.seed, symbols)
        del sample
    tokenizer_seconds = time.perf_counter() - start
    (tmp / "src.model").write_bytes(tokenizer.src_bytes)
    if tokenizer.tgt_bytes is not None:
        (tmp / "tgt.model").write_bytes(tokenizer.tgt_bytes)
    vocab = max(tokenizer.src_vocab_size, tokenizer.tgt_vocab_size)
    dtype = np.dtype(np.uint16 if vocab <= 1 << 16 else np.int32)
    rules = Rules(d.max_words, d.max_len_ratio, d.dedupe, dtype.name)
    tables = tokenizer.vocab  # an imported model's piece tables, where it has them
    if tables is not None:
        (tmp / "vocab.json").write_text(json.dumps(tables, ensure_ascii=False), encoding="utf-8")
    initargs = (tokenizer.src_bytes, tokenizer.tgt_bytes, rules, tables)
    workers = d.workers or len(os.sched_getaffinity(0))
    chunks = _encoded(chunked(source.pairs("train"), CHUNK), workers, initargs)
    counts, hashes = _write_split(tmp, chunks, dtype)
    counts["duplicate"] = _dedupe(tmp, hashes, dtype) if hashes is not None else 0
    kept = counts["read"] - sum(counts[k] for k in ("empty", "too_long", "ratio", "duplicate"))
    log.info(
        "%s: %d training pairs kept of %d (dropped %d empty, %d over %d words, %d over the "
        "length ratio, %d repeated)",
        source.description,
        kept,
        counts["read"],
        counts["empty"],
        counts["too_long"],
        d.max_words,
        counts["ratio"],
        counts["duplicate"],
    )
    if not kept:
        raise empty_after_cleaning(source.description, counts["read"], counts, d.max_words)
    with open(tmp / "dev.jsonl", "w", encoding="utf-8") as f:
        for pair in source.pairs("dev"):
            f.write(json.dumps(pair, ensure_ascii=False) + "\n")
    files = {
        p.name: {"bytes": p.stat().st_size, "sha1": file_digest(p, "sha1")}
        for p in sorted(tmp.iterdir())
        if p.name != MARKER
    }
    cost = np.load(tmp / "cost.npy", mmap_mode="r")
    manifest = {
        "format": FORMAT,
        "translator": __version__,
        "key": _key(identity),
        "identity": identity,
        "pairs": kept,
        "counts": counts,
        "longest": int(cost.max()),
        "tokenizer": {"sha256": tokenizer.fingerprint(), "joint": tokenizer.joint},
        "dtype": dtype.name,
        "seconds": round(time.perf_counter() - start, 2),
        "tokenizer_seconds": round(tokenizer_seconds, 2),
        "files": files,
    }
    atomic_write_bytes(tmp / "manifest.json", json.dumps(manifest, indent=1).encode())


# ---------------------------------------------------------------- the entry points


@contextlib.contextmanager
def _locked(folder: Path):
    """One prepare per folder at a time, across processes (and runs)."""
    folder.parent.mkdir(parents=True, exist_ok=True)
    with open(folder.parent / f".{folder.name}.lock", "w") as lock:
        try:
            import fcntl

            fcntl.flock(lock, fcntl.LOCK_EX)
        except ImportError:  # no file locks here: concurrent prepares are the user's to avoid
            pass
        yield


def _wanted(
    cfg: Config, tokenizer: Tokenizer | None, source: Source, symbols=()
) -> tuple[Path, str, dict]:
    """Folder, key and identity of the prepared data for this config (and tokenizer)."""
    identity = _identity(cfg, source, None, symbols)
    key = _key(identity)
    if tokenizer is not None:  # resuming: the data prepared with the same tokenizer will do
        found, _ = check_prepared(folder_for(cfg, key), key)
        if found is None or found.tokenizer.fingerprint() != tokenizer.fingerprint():
            identity = _identity(cfg, source, tokenizer.fingerprint())
            key = _key(identity)
    return folder_for(cfg, key), key, identity


def prepare(
    cfg: Config, tokenizer: Tokenizer | None = None, source: Source | None = None, symbols=()
) -> Prepared:
    """The prepared training data for `cfg`: opened if current, else (re)built. `source`:
    the corpus (default: the data section's); `symbols`: corpus tags, pieces of their own in
    a subword model trained here."""
    source = source or open_source(cfg.data, cfg.seed)
    source.require("train", "dev")
    folder, key, identity = _wanted(cfg, tokenizer, source, symbols)
    _claim_parent(cfg, folder)
    with _locked(folder):
        claim_folder(folder, "data.prepared_dir", earlier_prepared, "prepare", make=False)
        found, why = check_prepared(folder, key)
        if found is not None:
            log.info("prepared data: %s (%d pairs)", folder, found.manifest["pairs"])
            return found
        if why != "absent":
            log.info("prepared data in %s: %s; preparing it again", folder, why)
        tmp = temporary_folder(folder)
        try:
            _build(cfg, source, tmp, identity, tokenizer, symbols)
            replace_folder(tmp, folder, "prepare")
        except OSError as err:
            remove_own_tree(tmp)
            if err.errno in (errno.ENOSPC, errno.EDQUOT, errno.EACCES, errno.EROFS):
                raise UserError(
                    f"cannot write the prepared data to {folder.parent}: {err.strerror}",
                    "free disk space or set data.prepared_dir to a writable folder",
                ) from None
            raise
        except BaseException:
            remove_own_tree(tmp)
            raise
        found, why = check_prepared(folder, key)
        if found is None:
            raise UserError(f"prepared data in {folder}: {why}, right after it was written")
        log.info("prepared data: %s (%d pairs)", folder, found.manifest["pairs"])
        return found


def wait_for_prepared(
    cfg: Config,
    tokenizer: Tokenizer | None,
    source: Source | None = None,
    symbols=(),
    poll: float = 0.5,
) -> Prepared:
    """For the processes that do not prepare: wait until another one has, then map it."""
    source = source or open_source(cfg.data, cfg.seed)
    while True:
        folder, key, _ = _wanted(cfg, tokenizer, source, symbols)
        found, _ = check_prepared(folder, key)
        if found is not None:
            return found
        time.sleep(poll)
