"""Load a parallel corpus (train/dev/test pairs) from the demo, a local folder or the hub.

Local folders may hold aligned text files ({split}.{lang}[.gz]), {split}.tsv,
{split}.jsonl, or a `datasets` save_to_disk folder. Whatever the layout, the
result is a Corpus of (source, target) string pairs. Only the training split is
cleaned; dev and test stay exactly as written so that BLEU is computed against
the references the user gave us.
"""

from __future__ import annotations

import gzip
import json
import logging
import re
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from translator.config import DataConfig
from translator.errors import UserError

log = logging.getLogger(__name__)

Pair = tuple[str, str]

DEV_NAMES = ("validation", "val", "dev", "valid")
TEST_NAMES = ("test", "test_2016_flickr", "newstest")
# Suffixes that look like a language code but are documentation or metadata
# (README.md, notes.txt, ...); they must not show up as "languages found".
NOT_LANGUAGES = {
    "md",
    "txt",
    "rst",
    "json",
    "yaml",
    "yml",
    "py",
    "sh",
    "csv",
    "cfg",
    "ini",
    "toml",
    "log",
    "pdf",
    "zip",
    "tar",
    "tgz",
    "lock",
    "arrow",
    "bin",
    "pt",
}
LANG_CODE = re.compile(r"[a-z]{2,3}([-_][A-Za-z0-9]{2,8})?")
GZIP_MAGIC = b"\x1f\x8b"
SAVE_TO_DISK_MARKERS = ("dataset_dict.json", "state.json")


@dataclass
class Corpus:
    train: list[Pair]
    dev: list[Pair]
    test: list[Pair]
    # Where it came from, for logs and run metadata; not part of equality so two
    # layouts of the same data compare equal.
    source: str = field(default="", compare=False)


# ---------------------------------------------------------------- text files


def read_lines(path: str | Path) -> list[str]:
    """Lines of a UTF-8 text file (gzip or not), split on "\\n" only, trailing "\\r" removed."""
    path = Path(path)
    if not path.is_file():
        raise UserError(f"file not found: {path}")
    try:
        data = path.read_bytes()
    except OSError as err:
        raise UserError(f"{path}: cannot read file ({err.strerror})") from None
    if data[:2] == GZIP_MAGIC or path.suffix == ".gz":
        try:
            data = gzip.decompress(data)
        except (OSError, EOFError, zlib.error) as err:
            raise UserError(f"{path}: not a valid gzip file ({err})") from None
    if data.startswith(b"\xef\xbb\xbf"):  # a UTF-8 byte order mark is not part of line 1
        data = data[3:]
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as err:
        line = data.count(b"\n", 0, err.start) + 1
        bad = data[err.start]
        raise UserError(
            f"{path}:{line}: not valid UTF-8 (byte 0x{bad:02x}); re-encode the file as UTF-8"
        ) from None
    # str.splitlines() would also split on U+2028, \x0b, \x1c... which can occur
    # inside a sentence and would break the line alignment of two files.
    lines = text.split("\n")
    if lines[-1] == "":  # the newline that ends the last line, or an empty file
        lines.pop()
    return [line[:-1] if line.endswith("\r") else line for line in lines]


def read_pair_files(src_path: str | Path, tgt_path: str | Path) -> list[Pair]:
    """Pairs from two line-aligned text files (line N of one translates line N of the other)."""
    src, tgt = read_lines(src_path), read_lines(tgt_path)
    if len(src) != len(tgt):
        raise UserError(
            f"line counts differ: {src_path} has {len(src)} lines, "
            f"{tgt_path} has {len(tgt)}; the files must be line-aligned"
        )
    return list(zip(src, tgt, strict=True))


# ---------------------------------------------------------------- cleaning


def clean_pairs(pairs: list[Pair], max_words: int) -> tuple[list[Pair], dict[str, int]]:
    """Strip both sides; drop pairs empty on either side or longer than max_words."""
    kept: list[Pair] = []
    dropped = {"empty": 0, "too_long": 0}
    for src, tgt in pairs:
        src, tgt = src.strip(), tgt.strip()
        if not src or not tgt:
            dropped["empty"] += 1
        elif len(src.split()) > max_words or len(tgt.split()) > max_words:
            dropped["too_long"] += 1
        else:
            kept.append((src, tgt))
    return kept, dropped


# ---------------------------------------------------------------- splits and languages


def _listing(names: Any) -> str:
    return ", ".join(sorted(names)) or "none"


def _resolve_split(key: str, wanted: str, auto: tuple[str, ...], found: Any, where: str) -> str:
    if wanted == "auto":
        for name in auto:
            if name in found:
                return name
        raise UserError(
            f"{where}: no split for 'data.{key}' (looked for {', '.join(auto)}); "
            f"splits found: {_listing(found)}; set data.{key} to one of them"
        )
    if wanted not in found:
        raise UserError(
            f"{where}: 'data.{key}' is '{wanted}' but there is no such split; "
            f"splits found: {_listing(found)}"
        )
    return wanted


def _splits(cfg: DataConfig, found: Any, where: str) -> dict[str, str]:
    """Corpus field -> split name in the data."""
    return {
        "train": _resolve_split("train_split", cfg.train_split, (), found, where),
        "dev": _resolve_split("dev_split", cfg.dev_split, DEV_NAMES, found, where),
        "test": _resolve_split("test_split", cfg.test_split, TEST_NAMES, found, where),
    }


def _check_langs(cfg: DataConfig, found: Any, where: str) -> None:
    for key in ("src_lang", "tgt_lang"):
        lang = getattr(cfg, key)
        if lang not in found:
            raise UserError(
                f"{where}: 'data.{key}' is '{lang}' but that language is not in "
                f"the data; languages found: {_listing(found)}"
            )


def _text(value: Any, where: str) -> str:
    if not isinstance(value, str):
        raise UserError(f"{where}: expected a string, got {value!r}")
    return value


def _record_pair(rec: Any, cfg: DataConfig, where: str) -> Pair:
    """One JSON object in any supported layout -> (src, tgt)."""
    if not isinstance(rec, dict):
        raise UserError(f"{where}: expected a JSON object, got {type(rec).__name__}")
    if isinstance(rec.get("translation"), dict):
        rec = rec["translation"]
    elif "src" in rec and "tgt" in rec and cfg.src_lang not in rec:
        return _text(rec["src"], f"{where} 'src'"), _text(rec["tgt"], f"{where} 'tgt'")
    _check_langs(cfg, rec.keys(), where)
    return (
        _text(rec[cfg.src_lang], f"{where} '{cfg.src_lang}'"),
        _text(rec[cfg.tgt_lang], f"{where} '{cfg.tgt_lang}'"),
    )


# ---------------------------------------------------------------- local folder layouts


def _scan(folder: Path) -> dict[str, dict]:
    """Files of each layout: {"text": {(split, lang): path}, "tsv": {split: path}, "jsonl": ...}."""
    found: dict[str, dict] = {"text": {}, "tsv": {}, "jsonl": {}}
    for path in sorted(folder.iterdir()):
        if not path.is_file() or path.name.startswith("."):
            continue
        base = path.name[:-3] if path.name.endswith(".gz") else path.name
        stem, _, ext = base.rpartition(".")
        if not stem:
            continue
        if ext in ("tsv", "jsonl"):
            key: Any = stem
            kind = ext
        elif LANG_CODE.fullmatch(ext) and ext not in NOT_LANGUAGES:
            key, kind = (stem, ext), "text"
        else:
            continue
        if key in found[kind]:  # both train.de and train.de.gz: refuse to guess which is current
            raise UserError(
                f"{folder}: both {found[kind][key].name} and {path.name} exist; remove one of them"
            )
        found[kind][key] = path
    return found


def _read_text_layout(cfg: DataConfig, files: dict, where: str) -> dict[str, list[Pair]]:
    _check_langs(cfg, {lang for _, lang in files}, where)
    splits = _splits(cfg, {split for split, _ in files}, where)
    out = {}
    for name, split in splits.items():
        paths = []
        for lang in (cfg.src_lang, cfg.tgt_lang):
            if (split, lang) not in files:
                raise UserError(
                    f"file not found: {where}/{split}.{lang}[.gz] "
                    f"(split '{split}' exists for other languages)"
                )
            paths.append(files[(split, lang)])
        out[name] = read_pair_files(*paths)
    return out


def _read_tsv(path: Path, cfg: DataConfig) -> list[Pair]:
    lines = read_lines(path)
    cols, start = [0, 1], 0
    header = lines[0].split("\t") if lines else []
    # A header is a first line of distinct language codes including one of ours;
    # a sentence pair practically never looks like that.
    names = [h.strip() for h in header]
    if (
        len(set(names)) == len(names) >= 2
        and all(LANG_CODE.fullmatch(h) for h in names)
        and {cfg.src_lang, cfg.tgt_lang} & set(names)
    ):
        _check_langs(cfg, names, f"{path}:1 (header)")
        cols, start = [names.index(cfg.src_lang), names.index(cfg.tgt_lang)], 1
    width = len(header) if start else 2
    what = "as in the header" if start else f"{cfg.src_lang} TAB {cfg.tgt_lang}"
    pairs = []
    for number in range(start, len(lines)):
        fields = lines[number].split("\t")
        if len(fields) != width:
            raise UserError(
                f"{path}:{number + 1}: expected {width} tab-separated columns "
                f"({what}), found {len(fields)}"
            )
        pairs.append((fields[cols[0]], fields[cols[1]]))
    return pairs


def _read_jsonl(path: Path, cfg: DataConfig) -> list[Pair]:
    pairs = []
    for number, line in enumerate(read_lines(path), start=1):
        if not line.strip():  # blank lines (often a trailing one) carry no record
            continue
        try:
            rec = json.loads(line)
        except json.JSONDecodeError as err:
            raise UserError(
                f"{path}:{number}: not valid JSON ({err.msg}); expected one object per line"
            ) from None
        pairs.append(_record_pair(rec, cfg, f"{path}:{number}"))
    return pairs


def _read_per_split(cfg: DataConfig, files: dict, reader: Any, where: str) -> dict:
    splits = _splits(cfg, files.keys(), where)
    return {name: reader(files[split], cfg) for name, split in splits.items()}


# ---------------------------------------------------------------- `datasets` objects


def _dataset_pairs(ds: Any, cfg: DataConfig, where: str) -> list[Pair]:
    columns = ds.column_names
    if "translation" in columns:
        feature = ds.features["translation"]
        langs = getattr(feature, "languages", None) or list(feature)
        _check_langs(cfg, langs, where)
        rows = ((t[cfg.src_lang], t[cfg.tgt_lang]) for t in ds["translation"])
    elif "src" in columns and "tgt" in columns and cfg.src_lang not in columns:
        rows = zip(ds["src"], ds["tgt"], strict=True)
    else:
        _check_langs(cfg, columns, where)
        rows = zip(ds[cfg.src_lang], ds[cfg.tgt_lang], strict=True)
    return [
        (_text(s, f"{where} row {i}"), _text(t, f"{where} row {i}"))
        for i, (s, t) in enumerate(rows)
    ]


def _read_dataset_dict(dd: Any, cfg: DataConfig, where: str) -> dict[str, list[Pair]]:
    if not hasattr(dd, "keys"):  # a single Dataset: we cannot tell train from dev
        raise UserError(
            f"{where}: expected a DatasetDict with named splits "
            f"(train, validation, test), got a single {type(dd).__name__}"
        )
    splits = _splits(cfg, list(dd.keys()), where)
    return {
        name: _dataset_pairs(dd[split], cfg, f"{where} split '{split}'")
        for name, split in splits.items()
    }


def _load_saved(folder: Path, cfg: DataConfig) -> dict[str, list[Pair]]:
    import datasets  # slow to import; only needed for this layout
    from datasets.exceptions import DatasetsError

    try:
        dd = datasets.load_from_disk(str(folder))
    except (OSError, ValueError, DatasetsError) as err:
        raise UserError(f"{folder}: cannot read the datasets save_to_disk folder ({err})") from None
    return _read_dataset_dict(dd, cfg, str(folder))


def _load_hub(cfg: DataConfig) -> dict[str, list[Pair]]:
    import datasets
    from datasets.exceptions import DatasetsError

    try:
        dd = datasets.load_dataset(cfg.dataset)
    except (OSError, ValueError, DatasetsError) as err:
        # Offline, unreachable, unknown name or needs a config: all fixable the same way.
        reason = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
        raise UserError(
            f"data.dataset: cannot load dataset '{cfg.dataset}' ({reason}); set "
            "data.dir to local files instead, e.g. "
            "--set data.dir=../shared/data/multi30k"
        ) from None
    return _read_dataset_dict(dd, cfg, f"dataset '{cfg.dataset}'")


def _load_dir(cfg: DataConfig) -> tuple[dict[str, list[Pair]], str]:
    folder = Path(cfg.dir)
    if not folder.is_dir():
        raise UserError(f"data.dir: folder not found: {folder}")
    if any((folder / marker).is_file() for marker in SAVE_TO_DISK_MARKERS):
        return _load_saved(folder, cfg), f"{folder} (datasets save_to_disk)"
    files = _scan(folder)
    where = str(folder)
    # One layout per folder; aligned text files first since they are the common case.
    if files["text"]:
        return _read_text_layout(cfg, files["text"], where), f"{folder} (text files)"
    if files["tsv"]:
        return _read_per_split(cfg, files["tsv"], _read_tsv, where), f"{folder} (tsv)"
    if files["jsonl"]:
        return _read_per_split(cfg, files["jsonl"], _read_jsonl, where), f"{folder} (jsonl)"
    raise UserError(
        f"data.dir: no corpus found in {folder}; expected {{split}}.{{lang}}[.gz] "
        "text files, {split}.tsv, {split}.jsonl or a datasets save_to_disk folder"
    )


def _load_demo(cfg: DataConfig, seed: int) -> dict[str, list[Pair]]:
    langs = (cfg.src_lang, cfg.tgt_lang)
    if langs not in (("de", "en"), ("en", "de")):
        raise UserError(
            f"data.src_lang/data.tgt_lang are {langs[0]}/{langs[1]} but the demo "
            "corpus is German-English: use de/en or en/de, or set data.dir"
        )
    from translator.data.demo import demo_splits  # lazy: only the demo needs the generator

    splits = demo_splits(cfg.demo_train, cfg.demo_dev, cfg.demo_test, seed)
    swap = langs == ("en", "de")
    return {
        name: [(t, s) if swap else (s, t) for s, t in splits[name]]
        for name in ("train", "dev", "test")
    }


# ---------------------------------------------------------------- entry point


def load_corpus(cfg: DataConfig, seed: int = 1) -> Corpus:
    """Train/dev/test pairs as described by the `data` section of the config."""
    if cfg.dir is not None:
        splits, source = _load_dir(cfg)
    elif cfg.dataset == "demo":
        splits, source = _load_demo(cfg, seed), "demo"
    else:
        splits = _load_hub(cfg)
        local = Path(cfg.dataset).exists()
        source = f"{cfg.dataset} (load_dataset)" if local else f"hub:{cfg.dataset}"
    train, dropped = clean_pairs(splits["train"], cfg.max_words)
    read = len(splits["train"])
    log.info(
        "%s: %d training pairs kept of %d (dropped %d empty, %d over %d words); dev %d, test %d",
        source,
        len(train),
        read,
        dropped["empty"],
        dropped["too_long"],
        cfg.max_words,
        len(splits["dev"]),
        len(splits["test"]),
    )
    if not train:
        raise UserError(
            f"{source}: the training split is empty after cleaning: {read} pairs "
            f"read, {dropped['empty']} dropped as empty, {dropped['too_long']} "
            f"dropped as longer than data.max_words={cfg.max_words}"
        )
    return Corpus(train=train, dev=splits["dev"], test=splits["test"], source=source)
