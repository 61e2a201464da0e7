"""Tests for translator.data.corpus: every layout gives the same Corpus; every user mistake
is a one-line UserError that names the file, line or config key."""

from __future__ import annotations

import gzip
import importlib.util
import json
import logging
import os
import tempfile
from pathlib import Path

import pytest
from corpora import (
    CLEAN_TRAIN,
    DEV,
    EXPECTED,
    SPLITS,
    TEST,
    TRAIN,
    record,
    write,
    write_jsonl_layout,
    write_saved_layout,
    write_text_layout,
)
from hypothesis import given, settings
from hypothesis import strategies as st

from translator.config import DataConfig
from translator.data.clean import clean_pairs
from translator.data.corpus import load_corpus, read_lines, read_pair_files
from translator.errors import UserError


def cfg(**kw) -> DataConfig:
    kw.setdefault("max_words", 6)
    return DataConfig(**kw)


def message(excinfo) -> str:
    text = str(excinfo.value)
    assert "\n" not in text, "UserError messages are one line"
    return text


def write_tsv_layout(folder: Path, header: bool) -> Path:
    folder.mkdir(exist_ok=True)
    for name, pairs in zip(("train", "dev", "test"), SPLITS.values(), strict=True):
        if header:  # columns in the other order: the header must choose them
            lines = ["en\tde"] + [f"{en}\t{de}" for de, en in pairs]
        else:
            lines = [f"{de}\t{en}" for de, en in pairs]
        write(folder / f"{name}.tsv", lines)
    return folder


# ---------------------------------------------------------------- readers agree


@pytest.mark.parametrize("gz", [False, True])
def test_text_files(tmp_path, gz):
    folder = write_text_layout(tmp_path / "d", gz)
    corpus = load_corpus(cfg(dir=str(folder)))
    assert corpus == EXPECTED
    assert corpus.source == f"{folder} (text files)"


@pytest.mark.parametrize("header", [False, True])
def test_tsv(tmp_path, header):
    corpus = load_corpus(cfg(dir=str(write_tsv_layout(tmp_path / "d", header))))
    assert corpus == EXPECTED
    assert corpus.source.endswith("(tsv)")


@pytest.mark.parametrize("layout", ["srctgt", "translation", "flat"])
def test_jsonl(tmp_path, layout):
    corpus = load_corpus(cfg(dir=str(write_jsonl_layout(tmp_path / "d", layout))))
    assert corpus == EXPECTED
    assert corpus.source.endswith("(jsonl)")


@pytest.mark.parametrize("layout", ["translation", "flat"])
def test_save_to_disk(hf, tmp_path, layout):
    folder = write_saved_layout(hf, tmp_path / "saved", layout)
    corpus = load_corpus(cfg(dir=str(folder)))
    assert corpus == EXPECTED
    assert corpus.source.endswith("(datasets save_to_disk)")


def test_load_dataset_path_with_local_folder(hf, tmp_path):
    # load_dataset maps val.jsonl to a "validation" split, as hub datasets name it.
    folder = write_jsonl_layout(tmp_path / "hubdata", "translation", ("train", "val", "test"))
    corpus = load_corpus(cfg(dataset=str(folder)))
    assert corpus == EXPECTED


def test_swapped_direction_reads_the_other_side(tmp_path):
    corpus = load_corpus(
        cfg(dir=str(write_tsv_layout(tmp_path / "d", header=True)), src_lang="en", tgt_lang="de")
    )
    assert corpus.dev == [(en, de) for de, en in DEV]


# ---------------------------------------------------------------- splits


def test_explicit_split_names(tmp_path):
    folder = write_text_layout(tmp_path / "d", gz=False, names=("tr", "heldout", "final"))
    corpus = load_corpus(
        cfg(dir=str(folder), train_split="tr", dev_split="heldout", test_split="final")
    )
    assert corpus == EXPECTED


def test_auto_split_prefers_validation_over_dev(tmp_path):
    folder = write_tsv_layout(tmp_path / "d", header=False)
    write(folder / "validation.tsv", ["Anders\tOther"])
    assert load_corpus(cfg(dir=str(folder))).dev == [("Anders", "Other")]


@pytest.mark.parametrize("key", ["train_split", "dev_split", "test_split"])
def test_unknown_split_lists_those_found(tmp_path, key):
    folder = write_tsv_layout(tmp_path / "d", header=False)
    with pytest.raises(UserError) as exc:
        load_corpus(cfg(dir=str(folder), **{key: "nosuch"}))
    text = message(exc)
    assert f"data.{key}" in text and "dev, test, train" in text


def test_a_folder_without_a_test_split_trains_and_eval_names_what_is_missing(tmp_path):
    """Training reads train and dev only; the test split is looked for when it is scored."""
    from translator.data.corpus import open_source

    folder = tmp_path / "d"
    folder.mkdir()
    write(folder / "train.tsv", ["a\tb"])
    write(folder / "valid.tsv", ["c\td"])
    corpus = load_corpus(cfg(dir=str(folder)))
    assert corpus.dev == [("c", "d")] and corpus.test == []
    with pytest.raises(UserError, match=r"no test split \(looked for test, .*data\.test_split"):
        list(open_source(cfg(dir=str(folder))).pairs("test"))
    with pytest.raises(UserError, match=r"data\.test_split.*'final'"):  # named: it must exist
        load_corpus(cfg(dir=str(folder), test_split="final"))


def test_auto_split_missing(tmp_path):
    folder = tmp_path / "d"
    folder.mkdir()
    write(folder / "train.tsv", ["a\tb"])
    write(folder / "test.tsv", ["a\tb"])
    with pytest.raises(UserError, match=r"data\.dev_split.*validation, val, dev, valid"):
        load_corpus(cfg(dir=str(folder)))


# ---------------------------------------------------------------- cleaning


def test_clean_pairs_counts():
    kept, dropped = clean_pairs(TRAIN, max_words=6)
    assert kept == CLEAN_TRAIN
    assert dropped == {"empty": 2, "too_long": 1}
    assert clean_pairs(TRAIN, max_words=7)[0][2] == (
        "eins zwei drei vier fünf sechs sieben",
        "one two three",
    )


def test_cleaning_is_logged_and_dev_test_untouched(tmp_path, caplog):
    caplog.set_level(logging.INFO, logger="translator.data.corpus")
    corpus = load_corpus(cfg(dir=str(write_text_layout(tmp_path / "d", gz=False))))
    assert corpus.dev == DEV and corpus.test == TEST  # not stripped
    assert "dropped 2 empty, 1 over 6 words" in caplog.text


def test_empty_after_cleaning(tmp_path):
    folder = write_tsv_layout(tmp_path / "d", header=False)
    write(folder / "train.tsv", ["\tx", "a b c\tx y"])
    with pytest.raises(UserError) as exc:
        load_corpus(cfg(dir=str(folder), max_words=2))
    text = message(exc)
    assert "empty after cleaning" in text and "2 pairs read" in text
    assert "1 dropped as empty" in text and "1 dropped as longer than data.max_words=2" in text


# ---------------------------------------------------------------- demo


def test_demo_rejects_other_languages():
    with pytest.raises(UserError, match=r"data\.src_lang"):
        load_corpus(cfg(src_lang="fr", tgt_lang="en"))


@pytest.mark.skipif(
    importlib.util.find_spec("translator.data.demo") is None,
    reason="translator/data/demo.py is not written yet",
)
def test_demo_language_swap():
    small = dict(demo_train=20, demo_dev=5, demo_test=5)
    de_en = load_corpus(cfg(max_words=100, **small), seed=3)
    en_de = load_corpus(cfg(max_words=100, src_lang="en", tgt_lang="de", **small), seed=3)
    assert de_en.source == "demo"
    assert en_de.dev == [(en, de) for de, en in de_en.dev]
    assert en_de.train == [(en, de) for de, en in de_en.train]


# ---------------------------------------------------------------- text file reading


def test_read_lines_newlines_crlf_and_gzip_magic(tmp_path):
    raw = "a\r\nb\u2028c\n\n  d \r\n".encode()
    (tmp_path / "plain.txt").write_bytes(raw)
    (tmp_path / "zipped.txt").write_bytes(gzip.compress(raw))  # gzip found by magic bytes
    expected = ["a", "b\u2028c", "", "  d "]
    assert read_lines(tmp_path / "plain.txt") == expected
    assert read_lines(tmp_path / "zipped.txt") == expected
    (tmp_path / "empty.txt").write_bytes(b"")
    assert read_lines(tmp_path / "empty.txt") == []


@settings(max_examples=40, deadline=None)
@given(
    # Text a UTF-8 file can hold (no lone surrogates), without the line breaks and the
    # byte-order mark that read_lines treats specially (tested on their own above).
    st.lists(
        st.text(
            st.characters(blacklist_characters="\n\r\ufeff", blacklist_categories=("Cs",)),
            max_size=8,
        ),
        max_size=5,
    ),
    st.booleans(),
)
def test_read_lines_round_trip(lines, gz):
    with tempfile.TemporaryDirectory() as tmp:
        path = write(Path(tmp) / ("x.gz" if gz else "x"), lines, gz)
        assert read_lines(path) == lines


def test_read_pair_files(tmp_path):
    src = write(tmp_path / "s.de.gz", ["Hallo", "Welt"], gz=True)
    tgt = write(tmp_path / "t.en", ["Hello", "world"])
    assert read_pair_files(src, tgt) == [("Hallo", "Hello"), ("Welt", "world")]


# ---------------------------------------------------------------- errors


def test_missing_file(tmp_path):
    with pytest.raises(UserError, match="file not found: .*nope.de"):
        read_lines(tmp_path / "nope.de")


def test_missing_target_file_of_a_split(tmp_path):
    folder = write_text_layout(tmp_path / "d", gz=False)
    os.remove(folder / "val.en")
    with pytest.raises(UserError, match=r"file not found: .*val\.en"):
        load_corpus(cfg(dir=str(folder)))


def test_missing_folder(tmp_path):
    with pytest.raises(UserError, match="data.dir: folder not found"):
        load_corpus(cfg(dir=str(tmp_path / "absent")))
    (tmp_path / "train.de.gz").write_bytes(b"")
    with pytest.raises(UserError, match=r"data.dir: a file, not a folder: .*train\.de\.gz"):
        load_corpus(cfg(dir=str(tmp_path / "train.de.gz")))


def test_line_count_mismatch_names_both(tmp_path):
    folder = write_text_layout(tmp_path / "d", gz=True)
    write(folder / "val.en.gz", ["only one"], gz=True)
    with pytest.raises(UserError) as exc:
        load_corpus(cfg(dir=str(folder)))
    text = message(exc)
    assert "val.de.gz has 2 lines" in text and "val.en.gz has 1" in text


def test_not_utf8_names_the_line(tmp_path):
    path = tmp_path / "bad.de"
    path.write_bytes(b"ok\nalso ok\nM\xfcller\n")
    with pytest.raises(UserError, match=r"bad\.de:3: not valid UTF-8"):
        read_lines(path)
    (tmp_path / "bad.de.gz").write_bytes(gzip.compress(path.read_bytes()))
    with pytest.raises(UserError, match=r"bad\.de\.gz:3: not valid UTF-8"):
        read_lines(tmp_path / "bad.de.gz")
    renamed = tmp_path / "report.doc"  # (a Word document: a zip, bad bytes past a newline)
    renamed.write_bytes(b"PK\x03\x04\n\n\xff rest")
    with pytest.raises(UserError, match=r"report\.doc:1: a zip file, not text; .*--format docx"):
        read_lines(renamed)


def test_gz_suffix_that_is_not_gzip(tmp_path):
    with pytest.raises(UserError, match="not a valid gzip file"):
        read_lines(write(tmp_path / "x.de.gz", ["plain text"]))


def test_malformed_jsonl_line(tmp_path):
    folder = write_jsonl_layout(tmp_path / "d", "translation")
    write(folder / "valid.jsonl", [json.dumps(record("flat", "a", "b")), '{"de": "x",'])
    with pytest.raises(UserError) as exc:
        load_corpus(cfg(dir=str(folder)))
    assert "valid.jsonl:2: not valid JSON" in message(exc)


@pytest.mark.parametrize(
    "line, said",
    [
        ({"src": "Ein Hund."}, "valid.jsonl:2: a record with 'src' and no 'tgt'"),
        ({"en": "A dog."}, "valid.jsonl:2: a record with 'en' and no 'de'"),
        ({"translation": {"de": "Ein Hund."}}, "valid.jsonl:2: a record with 'de' and no 'en'"),
    ],
)
def test_a_jsonl_record_that_lost_one_side_is_named_with_its_line(tmp_path, line, said):
    folder = write_jsonl_layout(tmp_path / "d", "translation")
    write(folder / "valid.jsonl", [json.dumps(record("flat", "a", "b")), json.dumps(line)])
    with pytest.raises(UserError) as exc:
        load_corpus(cfg(dir=str(folder)))
    assert message(exc).endswith(said), message(exc)


def test_tsv_wrong_column_count(tmp_path):
    folder = write_tsv_layout(tmp_path / "d", header=True)
    write(folder / "test.tsv", ["en\tde", "A\tB", "just one column"])
    with pytest.raises(UserError, match=r"test\.tsv:3: expected 2 tab-separated columns"):
        load_corpus(cfg(dir=str(folder)))


@pytest.mark.parametrize("layout", ["text", "tsv", "jsonl", "saved"])
def test_unknown_language_lists_those_found(hf, tmp_path, layout):
    folder = tmp_path / "d"
    if layout == "text":
        write_text_layout(folder, gz=False)
    elif layout == "tsv":
        write_tsv_layout(folder, header=True)
    elif layout == "jsonl":
        write_jsonl_layout(folder, "translation")
    else:
        write_saved_layout(hf, folder, "flat")
    with pytest.raises(UserError) as exc:
        load_corpus(cfg(dir=str(folder), tgt_lang="fr"))
    text = message(exc)
    assert "data.tgt_lang" in text and "'fr'" in text and "languages found: de, en" in text


def test_unknown_source_language(tmp_path):
    folder = write_text_layout(tmp_path / "d", gz=True)
    with pytest.raises(UserError, match=r"data\.src_lang.*'cs'.*languages found: de, en"):
        load_corpus(cfg(dir=str(folder), src_lang="cs"))


def test_empty_folder(tmp_path):
    with pytest.raises(UserError, match="no corpus found"):
        load_corpus(cfg(dir=str(tmp_path)))


def test_hub_offline_points_to_data_dir(hf):
    with pytest.raises(UserError) as exc:
        load_corpus(cfg(dataset="nobody-here/no-such-dataset-xyz"))
    text = message(exc)
    assert "no-such-dataset-xyz" in text and "data.dir" in text


# ---------------------------------------------------------------- the real data
