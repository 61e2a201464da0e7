"""Corpora the data tests write: small (de, en) splits in every layout the loader reads
(text files, JSON lines, a saved `datasets` folder), and a folder of demo pairs with the
config that reads it."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

from util import ROOT, tiny_config

from translator.config import config_from_dict
from translator.data.corpus import Corpus
from translator.data.demo import demo_splits

MULTI30K = ROOT / ".." / "shared" / "data" / "multi30k"

# (de, en) pairs. Train holds whitespace to strip, an empty side and an over-long pair
# (max_words=6 in the tests); dev/test hold whitespace that must survive untouched.
TRAIN = [
    ("Ein Hund läuft.", "A dog runs."),
    ("  Zwei Männer  ", " Two men \u3000"),
    ("Leer", "   "),
    ("", "Empty"),
    ("eins zwei drei vier fünf sechs sieben", "one two three"),
    ("Ein Satz\u2028mit Trenner", "A sentence\u2028with separator"),
]
CLEAN_TRAIN = [
    ("Ein Hund läuft.", "A dog runs."),
    ("Zwei Männer", "Two men"),
    ("Ein Satz\u2028mit Trenner", "A sentence\u2028with separator"),
]
DEV = [(" Ein Kind ", "A child "), ("Eine Katze.", "A cat.")]
TEST = [("Ein Haus.", "  A house."), ("Rot", "Red")]
EXPECTED = Corpus(train=CLEAN_TRAIN, dev=DEV, test=TEST)
SPLITS = {"train": TRAIN, "dev": DEV, "test": TEST}


def write(path: Path, lines: list[str], gz: bool = False) -> Path:
    data = "".join(line + "\n" for line in lines).encode("utf-8")
    path.write_bytes(gzip.compress(data) if gz else data)
    return path


def write_text_layout(folder: Path, gz: bool, names=("train", "val", "test_2016_flickr")) -> Path:
    folder.mkdir(exist_ok=True)
    for name, pairs in zip(names, SPLITS.values(), strict=True):
        suffix = ".gz" if gz else ""
        write(folder / f"{name}.de{suffix}", [de for de, _ in pairs], gz)
        write(folder / f"{name}.en{suffix}", [en for _, en in pairs], gz)
    (folder / "README.md").write_text("not a language\n")
    return folder


def record(layout: str, de: str, en: str) -> dict:
    if layout == "srctgt":
        return {"src": de, "tgt": en}
    if layout == "translation":
        return {"translation": {"de": de, "en": en}}
    return {"en": en, "de": de, "id": 7}


def write_jsonl_layout(folder: Path, layout: str, names=("train", "valid", "test")) -> Path:
    folder.mkdir(exist_ok=True)
    for name, pairs in zip(names, SPLITS.values(), strict=True):
        write(folder / f"{name}.jsonl", [json.dumps(record(layout, *p)) for p in pairs] + [""])
    return folder


def write_saved_layout(datasets, folder: Path, layout: str) -> Path:
    parts = {}
    for name, pairs in zip(("train", "validation", "test"), SPLITS.values(), strict=True):
        if layout == "translation":
            columns = {"translation": [{"de": de, "en": en} for de, en in pairs]}
        else:  # like bentrevett/multi30k: flat "en" and "de" columns
            columns = {"en": [en for _, en in pairs], "de": [de for de, _ in pairs]}
        parts[name] = datasets.Dataset.from_dict(columns)
    datasets.DatasetDict(parts).save_to_disk(str(folder))
    return folder


# -- demo pairs in a folder ---------------------------------------------------------------------

PAIRS = demo_splits(400, 20, 20, seed=3)


def corpus_folder(folder: Path, extra=()) -> Path:
    """Text files: demo pairs, plus `extra` training pairs (repeats, empty sides...)."""
    folder.mkdir(parents=True, exist_ok=True)
    train = PAIRS["train"] + list(extra)
    for name, pairs in (("train", train), ("val", PAIRS["dev"]), ("test", PAIRS["test"])):
        write(folder / f"{name}.de", [de for de, _ in pairs])
        write(folder / f"{name}.en", [en for _, en in pairs])
    return folder


def config(tmp_path, folder, **data):
    """A tiny training config that reads `folder` (None: the demo corpus)."""
    return config_from_dict(
        tiny_config(
            run_dir=str(tmp_path / "run"),
            data={"dir": None if folder is None else str(folder), "workers": 2, **data},
            tokenizer={"vocab_size": 500},
            train={"batch_tokens": 300},
        )
    )
