"""`translator filter` holds one score per pair for --keep to rank, and no more: the memory
it takes beyond a chunk's grows by a few bytes a pair (a model that scores each pair by
its line number stands in for a real one)."""

import math
import tracemalloc
from types import SimpleNamespace

import pytest

from translator.commands.filter import filter_pairs
from translator.config import DecodeConfig


class _Scorer:
    """Scores each target by the number that ends it: -(number % 7) / 10."""

    cfg = SimpleNamespace(decode=DecodeConfig(), data=SimpleNamespace(src_lang="de", tgt_lang="en"))

    def score(self, sources, targets, request):
        return [SimpleNamespace(mean=-(int(t.split()[-1]) % 7) / 10) for t in targets]


@pytest.fixture
def scorer(monkeypatch):
    monkeypatch.setattr("translator.engines.load.load_engine", lambda *a, **k: _Scorer())


def _pairs(tmp_path, n: int):
    src, tgt = tmp_path / f"{n}.de", tmp_path / f"{n}.en"
    src.write_text("".join(f"ein Hund {i}\n" for i in range(n)), encoding="utf-8")
    tgt.write_text("".join(f"a dog {i}\n" for i in range(n)), encoding="utf-8")
    return src, tgt


def _peak(tmp_path, n: int) -> int:
    src, tgt = _pairs(tmp_path, n)
    tracemalloc.start()
    try:
        filter_pairs("m.pt", src, tgt, tmp_path / "o.de", tmp_path / "o.en", keep=0.5)
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_filter_memory_grows_by_a_few_bytes_a_pair(tmp_path, scorer):
    n = 20_000
    grown = _peak(tmp_path, 2 * n) - _peak(tmp_path, n)
    assert grown < 20 * n  # lists of Python floats for the scores took 30 bytes a pair


def test_keep_takes_the_best_share_ties_in_file_order(tmp_path, scorer):
    src, tgt = _pairs(tmp_path, 20)
    scores = tmp_path / "s.txt"
    filter_pairs("m.pt", src, tgt, tmp_path / "o.de", tmp_path / "o.en", keep=0.25,
                 scores_file=scores)  # fmt: skip
    # exp(0) for 0, 7, 14; exp(-0.1) for 1, 8, 15: five places, 1 and 8 first in the file
    assert (tmp_path / "o.en").read_text().split("\n")[:-1] == [
        f"a dog {i}" for i in (0, 1, 7, 8, 14)
    ]
    assert scores.read_text().split()[:2] == ["1.0", repr(math.exp(-0.1))]
