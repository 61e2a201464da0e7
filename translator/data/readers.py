"""Streaming readers for the local corpus layouts: one line, one record at a time.

Nothing here holds a whole file: a corpus of millions of lines is read as a
stream, and every error still names the file and the line.
"""

from __future__ import annotations

import gzip
import json
import os
import re
import select
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from translator.errors import UserError

Pair = tuple[str, str]

GZIP_MAGIC = b"\x1f\x8b"
BOM = b"\xef\xbb\xbf"
ZIP_MAGIC = b"PK\x03\x04"
LANG_CODE = re.compile(r"[a-z]{2,3}([-_][A-Za-z0-9]{2,8})?")


def _missing(path: Path) -> str:
    """Why `path` cannot be read as a file, in the words the commands use."""
    return f"{path} is a folder; give a file" if path.is_dir() else f"file not found: {path}"


def _open(path: Path):
    if not path.is_file():
        raise UserError(_missing(path))
    try:
        with open(path, "rb") as probe:
            zipped = probe.read(2) == GZIP_MAGIC
        if zipped or path.suffix == ".gz":
            return gzip.open(path, "rb")
        return open(path, "rb", buffering=1 << 20)
    except OSError as err:
        raise UserError(f"{path}: cannot read file ({err.strerror})") from None


def decode_lines(raw_lines, place, hint: str, start: int = 1) -> Iterator[str]:
    """UTF-8 lines from byte lines: a leading byte order mark and each line's "\\n" and one
    "\\r" removed; bytes that are not UTF-8 are a one-line error at `place(line number)`,
    the first line numbered `start`."""
    zipped = False
    for number, raw in enumerate(raw_lines, start):
        if number == 1 and raw.startswith(BOM):  # a byte order mark is not text
            raw = raw[3:]
        zipped = zipped or (number == 1 and raw.startswith(ZIP_MAGIC))
        if raw.endswith(b"\n"):
            raw = raw[:-1]
        if raw.endswith(b"\r"):
            raw = raw[:-1]
        try:
            yield raw.decode("utf-8")
        except UnicodeDecodeError as err:
            if zipped:  # (a Word document, most often, read as lines)
                raise UserError(f"{place(1)}: a zip file, not text; translate reads a Word "
                                "document with --format docx") from None  # fmt: skip
            raise UserError(
                f"{place(number)}: not valid UTF-8 (byte 0x{raw[err.start]:02x}); {hint}"
            ) from None


def iter_lines(path: str | Path) -> Iterator[str]:
    """Lines of a UTF-8 text file (gzip or not), split on "\\n" only, trailing "\\r" removed.

    A binary file splits on b"\\n" alone, never on U+2028, \\x0b or \\x1c, which can
    occur inside a sentence and would break the line alignment of two files."""
    path = Path(path)
    with _open(path) as f:
        try:
            yield from decode_lines(f, lambda n: f"{path}:{n}", "re-encode the file as UTF-8")
        except (OSError, EOFError, zlib.error) as err:
            if isinstance(err, OSError) and not isinstance(err, gzip.BadGzipFile):
                if err.strerror:
                    raise UserError(f"{path}: cannot read file ({err.strerror})") from None
            raise UserError(f"{path}: not a valid gzip file ({err})") from None


def read_lines(path: str | Path) -> list[str]:
    """All lines of a (small) text file; see iter_lines."""
    return list(iter_lines(path))


def iter_pair_files(src_path: str | Path, tgt_path: str | Path) -> Iterator[Pair]:
    """Pairs from two line-aligned text files (line N of one translates line N of the other)."""
    src, tgt = iter_lines(src_path), iter_lines(tgt_path)
    count = 0
    for s in src:
        t = next(tgt, None)
        if t is None:
            _count_mismatch(src_path, tgt_path, count + 1 + sum(1 for _ in src), count)
        count += 1
        yield s, t
    rest = sum(1 for _ in tgt)
    if rest:
        _count_mismatch(src_path, tgt_path, count, count + rest)


def _count_mismatch(src_path, tgt_path, n_src: int, n_tgt: int):
    raise UserError(
        f"line counts differ: {src_path} has {n_src} lines, "
        f"{tgt_path} has {n_tgt}; the files must be line-aligned"
    )


def read_pair_files(src_path: str | Path, tgt_path: str | Path) -> list[Pair]:
    return list(iter_pair_files(src_path, tgt_path))


def split_files(spec: Any, key: str) -> list[tuple[str, Path]]:
    """(config key, path) of each file of a split given as a path or as {src, tgt}."""
    if isinstance(spec, str):
        return [(key, Path(spec))]
    return [(f"{key}.src", Path(spec.src)), (f"{key}.tgt", Path(spec.tgt))]


def check_split_files(spec: Any, key: str) -> list[tuple[str, Path]]:
    """split_files(spec, key), each file checked to exist: a missing one is a one-line
    error naming its config key."""
    files = split_files(spec, key)
    for name, path in files:
        if not path.is_file():
            raise UserError(f"{name}: {_missing(path)}")
    return files


def iter_split_files(spec: Any, key: str, src_lang: str, tgt_lang: str) -> Iterator[Pair]:
    """Pairs of a split's own files: two aligned text files, or one .tsv or .jsonl file
    (each optionally gzipped). Missing files are reported now, by their config key."""
    files = check_split_files(spec, key)
    if len(files) == 2:
        return iter_pair_files(files[0][1], files[1][1])
    path = files[0][1]
    reader = iter_jsonl if path.name.lower().removesuffix(".gz").endswith(".jsonl") else iter_tsv
    return reader(path, src_lang, tgt_lang)


class MissingLanguage(UserError):
    """A language the data does not hold; `key` (src_lang or tgt_lang) and `lang` let a
    caller that knows where the language was set (data.directions) name that instead."""

    def __init__(self, key: str, lang: str, found: Any, where: str):
        self.key, self.lang, self.where = key, lang, where
        self.found = ", ".join(sorted(found)) or "none"
        super().__init__(
            f"{where}: 'data.{key}' is '{lang}' but that language is not in the data; "
            f"languages found: {self.found}"
        )


def check_langs(src_lang: str, tgt_lang: str, found: Any, where: str) -> None:
    for key, lang in (("src_lang", src_lang), ("tgt_lang", tgt_lang)):
        if lang not in found:
            raise MissingLanguage(key, lang, found, where)


def text(value: Any, where: str) -> str:
    if not isinstance(value, str):
        raise UserError(f"{where}: expected a string, got {value!r}")
    return value


def record_pair(rec: Any, src_lang: str, tgt_lang: str, where: str) -> Pair:
    """One JSON object in any supported layout -> (src, tgt)."""
    if not isinstance(rec, dict):
        raise UserError(f"{where}: expected a JSON object, got {type(rec).__name__}")
    if isinstance(rec.get("translation"), dict):
        rec = rec["translation"]
    elif "src" in rec and "tgt" in rec and src_lang not in rec:
        return text(rec["src"], f"{where} 'src'"), text(rec["tgt"], f"{where} 'tgt'")
    for a, b in (("src", "tgt"), (src_lang, tgt_lang)):  # a record of one side alone
        if len(rec) == 1 and (a in rec) != (b in rec):
            given, missing = (a, b) if a in rec else (b, a)
            raise UserError(f"{where}: a record with '{given}' and no '{missing}'")
    check_langs(src_lang, tgt_lang, rec.keys(), where)
    return (
        text(rec[src_lang], f"{where} '{src_lang}'"),
        text(rec[tgt_lang], f"{where} '{tgt_lang}'"),
    )


def iter_tsv(path: Path, src_lang: str, tgt_lang: str) -> Iterator[Pair]:
    lines = iter_lines(path)
    first = next(lines, None)
    if first is None:
        return
    cols, start = [0, 1], 1
    header = first.split("\t")
    # A header is a first line of distinct language codes including one of ours;
    # a sentence pair practically never looks like that.
    names = [h.strip() for h in header]
    if (
        len(set(names)) == len(names) >= 2
        and all(LANG_CODE.fullmatch(h) for h in names)
        and {src_lang, tgt_lang} & set(names)
    ):
        check_langs(src_lang, tgt_lang, names, f"{path}:1 (header)")
        cols, start = [names.index(src_lang), names.index(tgt_lang)], 2
        body: Any = lines
    else:
        body = _chain_first(first, lines)
    width = len(header) if start == 2 else 2
    what = "as in the header" if start == 2 else f"{src_lang} TAB {tgt_lang}"
    for number, line in enumerate(body, start=start):
        fields = line.split("\t")
        if len(fields) != width:
            raise UserError(
                f"{path}:{number}: expected {width} tab-separated columns "
                f"({what}), found {len(fields)}"
            )
        yield fields[cols[0]], fields[cols[1]]


def _chain_first(first: str, rest: Iterator[str]) -> Iterator[str]:
    yield first
    yield from rest


def iter_jsonl(path: Path, src_lang: str, tgt_lang: str) -> Iterator[Pair]:
    for number, line in enumerate(iter_lines(path), start=1):
        if not line.strip():  # blank lines (often a trailing one) carry no record
            continue
        try:
            rec = json.loads(line)
        except json.JSONDecodeError as err:
            raise UserError(
                f"{path}:{number}: not valid JSON ({err.msg}); expected one object per line"
            ) from None
        yield record_pair(rec, src_lang, tgt_lang, f"{path}:{number}")


def arriving(fd: int, size: int) -> Iterator[list[bytes]]:
    """The byte lines read from `fd` (a pipe, a terminal, a file), in lists of up to `size`
    that end where the lines already there run out: a line sent alone (by a person, or a
    program that waits for each answer) is handed on at once, a stream that flows fills
    whole lists. Only an empty list's wait blocks."""
    ready: list[bytes] = []
    # the line not yet ended, in the pieces read of it: joined once its end comes, since
    # gluing each read onto it copies it whole (a line of megabytes took minutes)
    rest: list[bytes] = []
    ended = False

    def read() -> None:  # (blocks until something comes, or the end)
        nonlocal ended
        data = os.read(fd, 1 << 16)
        ended = not data
        if b"\n" not in data:
            rest.append(data)
            return
        first, *lines, last = data.split(b"\n")
        ready.append(b"".join([*rest, first, b"\n"]))
        ready.extend(line + b"\n" for line in lines)
        rest[:] = [last]

    while ready or not ended:
        if not ready:
            read()
            continue
        while len(ready) < size and not ended and _waiting(fd):
            read()
        yield ready[:size]
        del ready[:size]
    if line := b"".join(rest):
        yield [line]


def _waiting(fd: int) -> bool:
    """Whether `fd` has something to read now (where select cannot tell: yes)."""
    try:
        return bool(select.select([fd], [], [], 0)[0])
    except (OSError, ValueError):
        return True


def chunked(items, size: int):
    """Lists of up to `size` items from an iterable, lazily."""
    chunk = []
    for item in items:
        chunk.append(item)
        if len(chunk) == size:
            yield chunk
            chunk = []
    if chunk:
        yield chunk


def file_stats(paths: list[Path]) -> list:
    """[path, size, mtime] of each file (a missing one: [path, None, None]): a cheap
    fingerprint of files read."""
    out = []
    for p in paths:
        st = p.stat() if p.is_file() else None
        out.append([str(p.resolve()), st and st.st_size, st and st.st_mtime_ns])
    return out
