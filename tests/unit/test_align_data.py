"""Word alignments for guided alignment (translator/data/align.py): the symmetrisation, words
made of pieces, the piece matrix a batch carries, and the cache beside the prepared data."""

import json
import random
import sys

import numpy as np
import pytest
import torch
from util import tiny_config

from translator.config import config_from_dict
from translator.data import align
from translator.data.align import (
    align_texts,
    aligned_ids,
    grow_diag_final_and,
    piece_matrix,
    piece_words,
)
from translator.data.batching import Batch
from translator.data.prepare import prepare
from translator.errors import UserError


def test_grow_diag_final_and_grows_from_the_intersection():
    forward = [(0, 0), (1, 1), (2, 1)]
    reverse = [(0, 0), (1, 1), (3, 2)]
    # (2, 1) neighbours (1, 1) and aligns source word 2, which nothing aligned: grown;
    # (3, 2) is only in one direction and has no aligned neighbour: added by final-and.
    assert grow_diag_final_and(forward, reverse) == [(0, 0), (1, 1), (2, 1), (3, 2)]
    # a union point whose two words are already aligned stays out
    assert grow_diag_final_and([(0, 0), (1, 1), (0, 1)], [(0, 0), (1, 1)]) == [(0, 0), (1, 1)]


def test_eflomal_aligns_a_word_for_word_corpus_on_the_diagonal():
    rng = random.Random(0)
    lexicon = [(f"q{i}", f"w{i}") for i in range(20)]
    src, tgt = [], []
    for _ in range(300):
        words = rng.sample(lexicon, rng.randint(3, 7))
        src.append(" ".join(s for s, _ in words))
        tgt.append(" ".join(t for _, t in words))
    found = align_texts(src, tgt)
    assert len(found) == len(src)
    links = [p for pairs in found for p in pairs]
    words = sum(len(s.split()) for s in src)
    assert sum(i == j for i, j in links) >= 0.95 * len(links) > 0.9 * words
    assert align_texts(["", "a b"], ["x", ""]) == [[], []]  # nothing to align on a side


def test_a_missing_eflomal_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "eflomal", None)
    with pytest.raises(UserError) as err:
        align_texts(["a"], ["b"])
    assert 'pip install -e ".[align]"' in str(err.value)


# ids: 0-3 specials; 4 "▁Die", 5 "▁M", 6 "ut", 7 "ter", 8 "▁The", 9 "▁mo", 10 "ther"
STARTS = np.array([False] * 4 + [True, True, False, False, True, True, False])


def test_pieces_group_into_words_and_the_specials_into_none():
    assert piece_words(np.array([4, 5, 6, 7, 3]), STARTS).tolist() == [0, 1, 1, 1, -1]
    # a first piece without the word mark (a tag) starts the first word
    assert piece_words(np.array([6, 4, 3]), STARTS).tolist() == [0, 1, -1]


def test_each_target_piece_links_to_the_pieces_of_its_aligned_words():
    src = np.array([4, 5, 6, 7, 3])  # Die Mutter </s>
    tgt_out = np.array([8, 9, 10, 3])  # The mother </s>
    m = piece_matrix(src, tgt_out, np.array([[0, 0], [1, 1]]), STARTS, STARTS)
    assert m.astype(int).tolist() == [
        [1, 0, 0, 0, 0],
        [0, 1, 1, 1, 0],
        [0, 1, 1, 1, 0],
        [0, 0, 0, 0, 0],  # </s> aligned to nothing
    ]
    # a crossing link, and one past the words (another segmentation's) left out
    m = piece_matrix(src, tgt_out, np.array([[1, 0], [5, 1]]), STARTS, STARTS)
    assert m[0].tolist() == [False, True, True, True, False] and not m[1:].any()


def test_a_batchs_alignment_follows_split_padded_and_to():
    align_matrix = torch.zeros(3, 4, 5, dtype=torch.bool)
    align_matrix[1, 2, 3] = True
    ids = torch.ones(3, 5, dtype=torch.long)
    batch = Batch(ids, ids[:, :4], ids[:, :4], 12, align_matrix)
    padded = batch.padded(8)
    assert padded.align.shape == (3, 8, 8) and padded.align[1, 2, 3]
    assert int(padded.align.sum()) == 1
    parts = batch.split(2)
    assert [p.align.size(0) for p in parts] == [2, 1] and parts[0].align[1, 2, 3]
    assert batch.to(torch.device("cpu")).align is not None
    assert Batch(ids, ids, ids, 15).padded(8).align is None


@pytest.fixture
def prepared(tmp_path):
    cfg = config_from_dict(tiny_config(run_dir=str(tmp_path / "run"),
                                       data={"prepared_dir": str(tmp_path / "prep")}))  # fmt: skip
    return prepare(cfg)


def test_alignments_are_cached_with_the_prepared_data_and_reused(prepared, monkeypatch):
    first = aligned_ids(prepared)
    saved = json.loads((prepared.folder / "align.json").read_text())
    assert saved["identity"]["prepared"] == prepared.manifest["key"]
    assert saved["links"] == len(first.links) > len(prepared.ids)

    def no_aligner(*args):
        raise AssertionError("eflomal ran again")

    monkeypatch.setattr(align, "align_word_lines", no_aligner)
    again = aligned_ids(prepared)
    assert np.array_equal(np.asarray(again.links), np.asarray(first.links))
    batch = again.collate(np.arange(4))
    assert batch.align.shape == (4, batch.tgt_out.size(1), batch.src.size(1))
    assert batch.align[:, :3].any(-1).all()  # the first target pieces are all linked
    assert not batch.align[batch.tgt_out == 0].any()  # padding is linked to nothing

    # a changed file is not trusted: aligned again
    (prepared.folder / "align_links.npy").write_bytes(b"garbage")
    with pytest.raises(AssertionError, match="eflomal ran again"):
        aligned_ids(prepared)
