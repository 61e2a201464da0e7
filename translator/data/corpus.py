"""Load a parallel corpus (train/dev/test pairs) from the demo, a local folder or the hub.

Local folders may hold aligned text files ({split}.{lang}[.gz]), {split}.tsv,
{split}.jsonl, or a `datasets` save_to_disk folder; `data.train`, `data.dev` and
`data.test` name a split's own files, anywhere, instead. Whatever the layout, a
`Source` gives each split as a stream of (source, target) string pairs and a
cheap fingerprint of the data (file sizes and times, dataset fingerprints), so
a prepared copy can tell whether it is still current without reading it all; the
test split, which training never reads, is in no fingerprint.
Only the training split is cleaned; dev and test stay exactly as written so
that BLEU is computed against the references the user gave us.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from translator.config import DataConfig
from translator.data.clean import clean_pairs, empty_after_cleaning
from translator.data.readers import (
    LANG_CODE,
    Pair,
    check_langs,
    file_stats,
    iter_jsonl,
    iter_pair_files,
    iter_split_files,
    iter_tsv,
    read_lines,  # noqa: F401 (re-exported)
    read_pair_files,  # noqa: F401 (re-exported)
    split_files,
    text,
)
from translator.errors import UserError

log = logging.getLogger(__name__)

DEV_NAMES = ("validation", "val", "dev", "valid")
TEST_NAMES = ("test", "test_2016_flickr", "newstest")
# Suffixes that look like a language code but are not one (README.md, notes.txt, ...)
NOT_LANGUAGES = set(
    "md txt rst json yaml yml py sh csv cfg ini toml log pdf zip tar tgz lock arrow bin pt npy".split()
)
SAVE_TO_DISK_MARKERS = ("dataset_dict.json", "state.json")
FIELDS = ("train", "dev", "test")


@dataclass
class Corpus:
    train: list[Pair]
    dev: list[Pair]
    test: list[Pair]
    # where it came from, for logs (two layouts of the same data compare equal)
    source: str = field(default="", compare=False)


@dataclass
class Source:
    """Where a corpus comes from: a stream of pairs per split, and what identifies the data."""

    description: str
    streams: dict[str, Callable[[], Iterator[Pair]]]  # "train"/"dev"/"test" -> a new stream
    fingerprint: dict[str, Any]
    labels: dict[str, str] = field(default_factory=dict)  # split -> its own files, for reports
    files: tuple[Path, ...] = ()  # the local files it reads, which no output may replace

    def pairs(self, name: str) -> Iterator[Pair]:
        if name not in self.streams:  # (a folder without a test split trains)
            looked = f" (looked for {', '.join(TEST_NAMES)})" * (name == "test")
            raise UserError(f"{self.description}: no {name} split{looked}",
                            f"name its files with data.{name}, or its split with data.{name}_split")  # fmt: skip
        return self.streams[name]()

    def label(self, name: str) -> str:
        """Where split `name` comes from, for a report ("data/test.de + data/test.en")."""
        return self.labels.get(name) or f"{self.description} {name}"

    def require(self, *names: str) -> None:
        """A one-line error now, before any work, if a split is not set or its files are missing."""
        for name in names:
            self.pairs(name)  # opening a stream checks its files; reading is left to the caller


# ---------------------------------------------------------------- splits


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
    """Corpus field -> split name in the data, for the fields not set to files of their own."""
    names = {"train": (cfg.train_split, ()), "dev": (cfg.dev_split, DEV_NAMES)}
    names["test"] = (cfg.test_split, TEST_NAMES)
    if cfg.test_split == "auto" and not any(name in found for name in TEST_NAMES):
        del names["test"]  # training needs none; eval names what is missing (Source.pairs)
    return {
        name: _resolve_split(f"{name}_split", wanted, auto, found, where)
        for name, (wanted, auto) in names.items()
        if getattr(cfg, name) is None
    }


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


def _text_layout(cfg: DataConfig, files: dict, where: str) -> tuple[dict, dict]:
    check_langs(cfg.src_lang, cfg.tgt_lang, {lang for _, lang in files}, where)
    splits = _splits(cfg, {split for split, _ in files}, where)
    streams, used = {}, {}
    for name, split in splits.items():
        paths = []
        for lang in (cfg.src_lang, cfg.tgt_lang):
            if (split, lang) not in files:
                raise UserError(
                    f"file not found: {where}/{split}.{lang}[.gz] "
                    f"(split '{split}' exists for other languages)"
                )
            paths.append(files[(split, lang)])
        streams[name] = lambda p=paths: iter_pair_files(*p)
        used[name] = paths
    return streams, used


def _per_split_layout(cfg: DataConfig, files: dict, reader: Any, where: str):
    splits = _splits(cfg, files.keys(), where)
    streams = {
        name: lambda p=files[split]: reader(p, cfg.src_lang, cfg.tgt_lang)
        for name, split in splits.items()
    }
    return streams, {name: [files[split]] for name, split in splits.items()}


# ---------------------------------------------------------------- `datasets` objects


def _dataset_stream(ds: Any, cfg: DataConfig, where: str) -> Iterator[Pair]:
    """Rows of a Dataset or IterableDataset, read in batches of columns (fast on Arrow)."""
    row = 0
    for batch in ds.iter(batch_size=4096):
        if "translation" in batch:
            recs = batch["translation"]
            if recs and isinstance(recs[0], dict):
                check_langs(cfg.src_lang, cfg.tgt_lang, recs[0].keys(), where)
            sides: Any = ((r[cfg.src_lang], r[cfg.tgt_lang]) for r in recs)
        elif "src" in batch and "tgt" in batch and cfg.src_lang not in batch:
            sides = zip(batch["src"], batch["tgt"], strict=True)
        else:
            check_langs(cfg.src_lang, cfg.tgt_lang, batch.keys(), where)
            sides = zip(batch[cfg.src_lang], batch[cfg.tgt_lang], strict=True)
        for s, t in sides:
            yield text(s, f"{where} row {row}"), text(t, f"{where} row {row}")
            row += 1


def _dataset_dict(dd: Any, cfg: DataConfig, where: str) -> tuple[dict, dict]:
    if not hasattr(dd, "keys"):  # a single Dataset: we cannot tell train from dev
        raise UserError(
            f"{where}: expected a DatasetDict with named splits "
            f"(train, validation, test), got a single {type(dd).__name__}"
        )
    splits = _splits(cfg, list(dd.keys()), where)
    streams = {
        name: lambda s=split: _dataset_stream(dd[s], cfg, f"{where} split '{s}'")
        for name, split in splits.items()
    }
    # A Dataset's fingerprint changes with its content (a streamed one has none).
    prints = {n: getattr(dd[s], "_fingerprint", None) for n, s in splits.items() if n != "test"}
    return streams, prints


def _load_saved(folder: Path, cfg: DataConfig) -> Source:
    import datasets  # slow to import; only needed for this layout
    from datasets.exceptions import DatasetsError

    try:
        dd = datasets.load_from_disk(str(folder))
    except (OSError, ValueError, DatasetsError) as err:
        raise UserError(f"{folder}: cannot read the datasets save_to_disk folder ({err})") from None
    streams, prints = _dataset_dict(dd, cfg, str(folder))
    files = sorted(p for p in folder.rglob("*") if p.is_file())
    fingerprint = {"save_to_disk": prints, "files": file_stats(files)}
    return Source(f"{folder} (datasets save_to_disk)", streams, fingerprint)


def _load_hub(cfg: DataConfig) -> Source:
    import datasets
    from datasets.exceptions import DatasetsError

    try:
        dd = datasets.load_dataset(cfg.dataset, streaming=cfg.streaming)
    except (OSError, ValueError, DatasetsError) as err:
        # Offline, unreachable, unknown name or needs a config: all fixable the same way.
        reason = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
        raise UserError(
            f"data.dataset: cannot load dataset '{cfg.dataset}' ({reason}); set "
            "data.dir to local files instead, e.g. "
            "--set data.dir=../shared/data/multi30k"
        ) from None
    streams, prints = _dataset_dict(dd, cfg, f"dataset '{cfg.dataset}'")
    local = Path(cfg.dataset).exists()
    desc = f"{cfg.dataset} (load_dataset)" if local else f"hub:{cfg.dataset}"
    if cfg.streaming:
        desc += " (streaming)"
    fingerprint = {"dataset": cfg.dataset, "streaming": cfg.streaming, "splits": prints}
    return Source(desc, streams, fingerprint)


def _load_dir(cfg: DataConfig) -> Source:
    folder = Path(cfg.dir)
    if not folder.is_dir():
        found = "a file, not a folder" if folder.is_file() else "folder not found"
        raise UserError(f"data.dir: {found}: {folder}")
    if any((folder / marker).is_file() for marker in SAVE_TO_DISK_MARKERS):
        return _load_saved(folder, cfg)
    files = _scan(folder)
    where = str(folder)
    # One layout per folder; aligned text files first since they are the common case.
    if files["text"]:
        (streams, used), kind = _text_layout(cfg, files["text"], where), "text files"
    elif files["tsv"]:
        (streams, used), kind = _per_split_layout(cfg, files["tsv"], iter_tsv, where), "tsv"
    elif files["jsonl"]:
        (streams, used), kind = _per_split_layout(cfg, files["jsonl"], iter_jsonl, where), "jsonl"
    else:
        raise UserError(
            f"data.dir: no corpus found in {folder}; expected {{split}}.{{lang}}[.gz] "
            "text files, {split}.tsv, {split}.jsonl or a datasets save_to_disk folder"
        )
    prints = {n: file_stats(paths) for n, paths in used.items() if n != "test"}
    files = tuple(p for paths in used.values() for p in paths)
    return Source(f"{folder} ({kind})", streams, {"files": prints}, files=files)


def _load_demo(cfg: DataConfig, seed: int) -> Source:
    langs = (cfg.src_lang, cfg.tgt_lang)
    if langs not in (("de", "en"), ("en", "de")):
        raise UserError(
            f"data.src_lang/data.tgt_lang are {langs[0]}/{langs[1]} but the demo "
            "corpus is German-English: use de/en or en/de, or set data.dir"
        )
    from translator.data import demo, demo_lexicon  # lazy: only the demo needs the generator

    cache: dict[str, list[Pair]] = {}
    swap = langs == ("en", "de")

    def split(name: str) -> Iterator[Pair]:
        if not cache:
            cache.update(demo.demo_splits(cfg.demo_train, cfg.demo_dev, cfg.demo_test, seed))
        return iter([(t, s) if swap else (s, t) for s, t in cache[name]])

    code = hashlib.sha256()
    for module in (demo, demo_lexicon):
        code.update(Path(module.__file__).read_bytes())
    sizes = [cfg.demo_train, cfg.demo_dev, cfg.demo_test]
    fingerprint = {"demo": sizes, "seed": seed, "code": code.hexdigest()[:16]}
    return Source("demo", {n: lambda n=n: split(n) for n in FIELDS}, fingerprint)


# ---------------------------------------------------------------- a split's own files


def _unset(name: str, cfg: DataConfig) -> Callable[[], Iterator[Pair]]:
    def stream() -> Iterator[Pair]:
        raise UserError(
            f"data.{name} is not set: name the {name} files, e.g. data.{name}: "
            f"{{src: {name}.{cfg.src_lang}, tgt: {name}.{cfg.tgt_lang}}} (or --set "
            f"data.{name}.src=PATH --set data.{name}.tgt=PATH), or a .tsv/.jsonl file"
        )

    return stream


def with_own_files(
    cfg: DataConfig, own: list[str], base: Source | None, key: str = "data"
) -> Source:
    """`base` with the splits in `own` read from the files data.<split> names (errors name
    them `key`.<split>: a corpus of data.corpora's is data.corpora[N])."""
    streams = dict(base.streams) if base else {name: _unset(name, cfg) for name in FIELDS}
    for name in own:
        streams[name] = lambda n=name: iter_split_files(
            getattr(cfg, n), f"{key}.{n}", cfg.src_lang, cfg.tgt_lang
        )
    listed = {n: [str(p) for _, p in split_files(getattr(cfg, n), f"{key}.{n}")] for n in own}
    labels = {n: " + ".join(paths) for n, paths in listed.items()}
    # The test files, which training never reads, are named by label("test") alone
    parts = [f"{n}: {label}" for n, label in labels.items() if n != "test"]
    prints = {n: file_stats([Path(p) for p in listed[n]]) for n in own if n != "test"}
    desc, fingerprint = "; ".join(parts) or f"test: {labels.get('test')}", {"files": prints}
    if base:
        desc = f"{desc}; other splits: {base.description}" if parts else base.description
        fingerprint = {**fingerprint, "base": base.fingerprint} if parts else base.fingerprint
    files = (base.files if base else ()) + tuple(Path(p) for n in own for p in listed[n])
    return Source(desc, streams, fingerprint, labels, files)


# ---------------------------------------------------------------- entry points


def open_base(cfg: DataConfig, seed: int) -> Source:
    """The folder, hub dataset or demo the data section names, its own files aside."""
    if cfg.dir is not None:
        return _load_dir(cfg)
    if cfg.dataset == "demo":
        return _load_demo(cfg, seed)
    if cfg.dataset == "none":  # an imported model's: it came without its corpus
        raise UserError(
            "data.dataset: none (the model names no corpus, as an imported one); give its "
            "files, e.g. --set data.dir=PATH"
        )
    return _load_hub(cfg)


def open_source(cfg: DataConfig, seed: int = 1) -> Source:
    """The corpus the `data` section describes; nothing is read until a stream is.
    data.train/dev/test, where set, replace data.dir or data.dataset for their splits."""
    own = [name for name in FIELDS if getattr(cfg, name) is not None]
    if not own:
        return open_base(cfg, seed)
    # The built-in demo is only a default: it never fills in the dev or test split of a
    # corpus of one's own, whereas a folder or dataset the config names does.
    borrow = cfg.dir is not None or cfg.dataset not in ("demo", "none") or "train" not in own
    base = open_base(cfg, seed) if borrow and len(own) < len(FIELDS) else None
    return with_own_files(cfg, own, base)


def load_split(cfg: DataConfig, name: str, seed: int = 1) -> list[Pair]:
    """One split ("dev" or "test") as written; the training split is not read."""
    return list(open_source(cfg, seed).pairs(name))


def load_corpus(cfg: DataConfig, seed: int = 1) -> Corpus:
    """Train/dev/test pairs as lists, for corpora that fit in memory (tests, small data).
    Training on corpora of any size goes through data/prepare.py instead."""
    source = open_source(cfg, seed)
    read = 0

    def counted():
        nonlocal read
        for pair in source.pairs("train"):
            read += 1
            yield pair

    train, dropped = clean_pairs(counted(), cfg.max_words)
    dev = list(source.pairs("dev"))
    test = list(source.pairs("test")) if "test" in source.streams else []
    log.info(
        "%s: %d training pairs kept of %d (dropped %d empty, %d over %d words); dev %d, test %d",
        source.description, len(train), read, dropped["empty"], dropped["too_long"],
        cfg.max_words, len(dev), len(test))  # fmt: skip
    if not train:
        raise empty_after_cleaning(source.description, read, dropped, cfg.max_words)
    return Corpus(train=train, dev=dev, test=test, source=source.description)
