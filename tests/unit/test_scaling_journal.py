"""G.partial.batches (decode/journal.py) holds only the chunk being translated: a long
file's finished chunks are not kept in it, nor read again as each new chunk begins."""

import json

import pytest
from checkpoints import untrained

from translator.config import DecodeConfig
from translator.decode import resumable, translate_io
from translator.decode.journal import Journal
from translator.decode.request import DecodeRequest
from translator.decode.translator import Translator
from translator.engines.load import load_engine

DECODE = Translator._batch
WORDS = "ein Hund läuft über die grüne Wiese und zwei Kinder".split()


@pytest.fixture(scope="module")
def engine(tmp_path_factory):
    return load_engine(untrained(tmp_path_factory.mktemp("scaling_journal")), "cpu")


def request():
    return DecodeRequest(DecodeConfig(beam=1, batch_size=4, max_len_b=3), 1)


def source(tmp_path, n):
    src = tmp_path / f"in{n}.de"
    src.write_text("".join(" ".join(WORDS[i % 5 : i % 5 + 3]) + "\n" for i in range(n)))
    return src


def test_a_run_stopped_in_its_third_chunk_keeps_only_that_chunks_batches(
    engine, tmp_path, monkeypatch
):
    monkeypatch.setattr(translate_io, "FILE_CHUNK", 8)
    calls = []

    def batch(self, ids, req, **kw):
        if len(calls) == 5:  # two chunks of two batches, then one batch of the third
            raise KeyboardInterrupt
        calls.append(len(ids))
        return DECODE(self, ids, req, **kw)

    monkeypatch.setattr(type(engine), "_batch", batch)
    out = tmp_path / "out.en"
    with pytest.raises(KeyboardInterrupt):
        resumable.translate_file(engine, source(tmp_path, 40), out, request(), "m")
    _, record, batches = resumable.stopped_files(out)
    assert json.loads(record.read_text())["lines"] == 16
    kept = [json.loads(line) for line in batches.read_text().splitlines()]
    assert [entry["start"] for entry in kept] == [16]


def test_each_chunk_reads_no_earlier_chunks_batches(engine, tmp_path, monkeypatch):
    """The bytes read back as chunks begin do not grow with the file (they grew as n²)."""
    monkeypatch.setattr(translate_io, "FILE_CHUNK", 8)
    read, real = [], Journal._read

    def counted(self, start):
        read.append(self.path.stat().st_size if self.path.exists() else 0)
        return real(self, start)

    monkeypatch.setattr(Journal, "_read", counted)
    resumable.translate_file(engine, source(tmp_path, 40), tmp_path / "out.en", request(), "m")
    assert len(read) == 5 and sum(read) == 0
