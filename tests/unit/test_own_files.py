"""data.train / data.dev / data.test: a split's own files, any names and places."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from corpora import DEV, EXPECTED, SPLITS, TEST, write, write_text_layout
from util import tiny_config, user_error

from translator.config import SplitFiles, config_from_dict, load_config, save_config
from translator.data import prepare as prep
from translator.data.corpus import load_corpus, load_split, open_source
from translator.data.demo import demo_splits
from translator.data.tokenizer import cache_dir


def aligned(folder, stem: str, pairs, gz: bool = False) -> dict:
    """Two aligned files under unusual names: `<stem> Quelle.txt[.gz]` and `<stem>.EN-us`."""
    folder.mkdir(parents=True, exist_ok=True)
    src = write(folder / f"{stem} Quelle.txt{'.gz' if gz else ''}", [de for de, _ in pairs], gz)
    tgt = write(folder / f"{stem}.EN-us", [en for _, en in pairs])
    return {"src": str(src), "tgt": str(tgt)}


def data(**splits) -> object:
    return config_from_dict({"data": {"max_words": 6, **splits}}).data


def test_aligned_files_in_nested_folders_relative_to_the_working_directory(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    deep = tmp_path / "mein korpus" / "2024 (v2)" / "übersetzt"
    train = aligned(deep, "Ausbildung", SPLITS["train"], gz=True)
    dev = aligned(tmp_path / "d", "entw", DEV)
    test = aligned(tmp_path / "d" / "t", "prüfung", TEST)
    relative = {k: os.path.relpath(v, tmp_path) for k, v in train.items()}
    assert not relative["src"].startswith("/")
    corpus = load_corpus(data(train=relative, dev=dev, test=test))
    assert (corpus.train, corpus.dev, corpus.test) == (EXPECTED.train, DEV, TEST)
    assert "Ausbildung Quelle.txt.gz" in corpus.source
    assert open_source(data(train=relative, dev=dev, test=test)).label("test") == " + ".join(
        test.values()
    )


@pytest.mark.parametrize("gz", [False, True])
def test_one_tsv_or_jsonl_file_per_split(tmp_path, gz):
    suffix = ".gz" if gz else ""
    (tmp_path / "a b").mkdir()
    train = write(
        tmp_path / "a b" / f"All pairs.tsv{suffix}", [f"{d}\t{e}" for d, e in SPLITS["train"]], gz
    )
    records = [json.dumps({"de": d, "en": e}) for d, e in DEV]
    dev = write(tmp_path / f"dev set.jsonl{suffix}", records, gz)
    test = write(tmp_path / "TEST.TSV", ["de\ten"] + [f"{d}\t{e}" for d, e in TEST])
    corpus = load_corpus(data(train=str(train), dev=str(dev), test=str(test)))
    assert (len(corpus.train), corpus.dev, corpus.test) == (3, DEV, TEST)


def test_named_splits_replace_those_of_a_folder_and_the_others_stay(tmp_path):
    folder = write_text_layout(tmp_path / "folder", gz=False)
    own_test = [("Mein Test.", "My test.")]
    test = aligned(tmp_path / "elsewhere", "final", own_test)
    corpus = load_corpus(data(dir=str(folder), test=test))
    assert corpus.dev == DEV and corpus.test == own_test
    # the folder's own test split is not even looked for
    for path in folder.glob("test_2016_flickr.*"):
        path.unlink()
    assert load_split(data(dir=str(folder), test=test), "test") == own_test


def test_a_missing_file_names_the_key_and_the_path(tmp_path):
    dev = aligned(tmp_path, "dev", DEV)
    train = {"src": dev["src"], "tgt": str(tmp_path / "nowhere" / "train.en")}
    source = open_source(data(train=train, dev=dev))
    text = user_error(source.pairs, "train")
    assert "data.train.tgt" in text and str(tmp_path / "nowhere" / "train.en") in text
    assert list(source.pairs("dev")) == DEV  # the split whose files are there reads
    text = user_error(open_source(data(train=dev, dev=str(tmp_path / "dev.tsv"))).pairs, "dev")
    assert "data.dev" in text and "dev.tsv" in text


def test_dev_is_required_for_training_and_test_for_eval(tmp_path, monkeypatch):
    train = aligned(tmp_path, "corpus", demo_splits(60, 1, 1, seed=2)["train"])
    cfg = config_from_dict(tiny_config(data={"train": train}, run_dir=str(tmp_path / "run")))
    prepared = cache_dir().parent / "prepared"
    before = set(prepared.glob("*")) if prepared.is_dir() else set()
    text = user_error(prep.prepare, cfg)
    assert text.startswith("data.dev is not set"), text
    assert (set(prepared.glob("*")) if prepared.is_dir() else set()) == before  # no work done
    source = open_source(data(train=train, dev=train))
    assert "data.test is not set" in user_error(source.pairs, "test")


def test_line_counts_that_differ_name_both_files(tmp_path):
    pair = aligned(tmp_path / "x y", "corpus", SPLITS["train"])
    write(tmp_path / "x y" / "corpus.EN-us", ["only one line"])
    text = user_error(load_split, data(train=pair, dev=pair, test=pair), "test")
    assert pair["src"] in text and pair["tgt"] in text and "line" in text


def test_the_prepared_data_notices_when_the_files_change(tmp_path):
    pairs = demo_splits(120, 10, 10, seed=4)
    train = aligned(tmp_path / "in", "corpus", pairs["train"])
    dev = aligned(tmp_path / "in", "dev", pairs["dev"])
    test = aligned(tmp_path / "in", "test", pairs["test"])
    raw = tiny_config(
        run_dir=str(tmp_path / "run"), data={"train": train, "dev": dev, "test": test}
    )
    raw["tokenizer"] = {"vocab_size": 500}
    cfg = config_from_dict(raw)
    first = prep.prepare(cfg)
    assert first.manifest["pairs"] == 120 and first.dev == pairs["dev"]
    # a changed test file is not part of the prepared data
    write(tmp_path / "in" / "test.EN-us", ["Something else."] * 10)
    assert prep.prepare(cfg).folder == first.folder
    # a changed training file is
    write(tmp_path / "in" / "corpus.EN-us", [e for _, e in pairs["train"][:-1]] + ["New."])
    changed = prep.prepare(cfg)
    assert changed.folder != first.folder and changed.manifest["pairs"] == 120


# ---------------------------------------------------------------- the typed keys


def test_both_shapes_load_and_set_works_key_by_key(tmp_path):
    shipped = Path(__file__).resolve().parents[2] / "configs" / "transformer.yaml"
    cfg = load_config(shipped, ["data.train.src=my corpus/de.txt"])
    assert cfg.data.train == SplitFiles(src="my corpus/de.txt", tgt="corpus.en")
    cfg = load_config(shipped, ["data.train=all.tsv.gz", "data.test=null"])
    assert cfg.data.train == "all.tsv.gz" and cfg.data.test is None
    # an unset split is set key by key too
    cfg = config_from_dict(
        {"data": {"test": None}}, overrides=["data.test.src=a", "data.test.tgt=b"]
    )
    assert cfg.data.test == SplitFiles(src="a", tgt="b")
    save_config(cfg, tmp_path / "saved.yaml")
    assert load_config(tmp_path / "saved.yaml") == cfg


@pytest.mark.parametrize(
    "train, words",
    [
        ({"src": "a.de", "tgt": "a.en", "lang": "x"}, "unknown key 'data.train.lang'"),
        ({"src": "a.de", "tgtt": "a.en"}, "did you mean 'data.train.tgt'"),
        ({"src": "a.de"}, "missing key 'data.train.tgt'"),
        ({"src": "", "tgt": "a.en"}, "'data.train.src' must name a file"),
        (["a.de", "a.en"], "'data.train' must be a mapping {src, tgt}, a string or null"),
        ("corpus.de", "'data.train' must be a .tsv or .jsonl file"),
    ],
)
def test_a_wrong_split_value_names_the_key(tmp_path, train, words):
    path = tmp_path / "c.yaml"
    path.write_text(json.dumps({"run_dir": "r", "data": {"train": train}}))
    text = user_error(load_config, path)
    assert words in text and str(path) in text, text
