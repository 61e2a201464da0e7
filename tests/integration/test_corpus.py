"""Tests for translator.data.corpus: every layout gives the same Corpus; every user mistake
is a one-line UserError that names the file, line or config key."""

from __future__ import annotations

import pytest
from corpora import MULTI30K

from translator.config import DataConfig
from translator.data.corpus import load_corpus

# ---------------------------------------------------------------- readers agree


# ---------------------------------------------------------------- splits


# ---------------------------------------------------------------- cleaning


# ---------------------------------------------------------------- demo


# ---------------------------------------------------------------- text file reading


# ---------------------------------------------------------------- errors


# ---------------------------------------------------------------- the real data


@pytest.mark.slow
@pytest.mark.skipif(not MULTI30K.is_dir(), reason=f"{MULTI30K} not present")
def test_real_multi30k():
    corpus = load_corpus(DataConfig(dir=str(MULTI30K)))
    assert (len(corpus.train), len(corpus.dev), len(corpus.test)) == (29000, 1014, 1000)
    assert corpus.source.endswith("(text files)")
    assert corpus.dev[0][0].startswith("Eine Gruppe von Männern")
