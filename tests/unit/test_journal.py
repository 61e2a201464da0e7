"""A resumable translation stopped inside a chunk (decode/journal.py): the batches it finished
are not decoded again, and the output is the uninterrupted run's, byte for byte."""

import json

import pytest
from checkpoints import untrained

from translator.config import DecodeConfig
from translator.decode import resumable, translate_io
from translator.decode.request import DecodeRequest
from translator.decode.sampling import Sampling
from translator.decode.translator import Translator
from translator.engines.load import load_engine

DECODE = Translator._batch  # the engine's own, before any test wraps it
WORDS = "ein Hund läuft über die grüne Wiese und zwei Kinder spielen im Park mit einem Ball".split()


@pytest.fixture(scope="module")
def engine(tmp_path_factory):
    return load_engine(untrained(tmp_path_factory.mktemp("journal")), "cpu")


@pytest.fixture
def job(tmp_path, monkeypatch):
    monkeypatch.setattr(translate_io, "FILE_CHUNK", 20)
    src = tmp_path / "in.de"
    lines = [" ".join(WORDS[i % 7 : i % 7 + 1 + i % 9]) for i in range(30)]
    lines[5] = ""  # a blank line is no batch's
    src.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return src, tmp_path


def counted(engine, monkeypatch, stop_after=None):
    """Count the engine's batches; raise KeyboardInterrupt (Ctrl-C) before batch stop_after+1."""
    real, calls = DECODE, []

    def batch(self, ids, request, **kw):
        if stop_after is not None and len(calls) >= stop_after:
            raise KeyboardInterrupt
        calls.append(len(ids))
        return real(self, ids, request, **kw)

    monkeypatch.setattr(type(engine), "_batch", batch)  # (an engine's own are frozen)
    return calls


REQUESTS = {
    "beam": lambda: DecodeRequest(DecodeConfig(beam=3, batch_size=4, max_len_b=6), 2),
    "alignments": lambda: DecodeRequest(
        DecodeConfig(beam=2, batch_size=4, max_len_b=6), 1, alignments=True, confidence=True
    ),
}


@pytest.mark.parametrize("kind", sorted(REQUESTS))
def test_a_run_stopped_mid_chunk_decodes_only_the_batches_it_had_not_finished(
    engine, job, monkeypatch, kind
):
    src, tmp = job
    whole = tmp / "whole.en"
    straight = counted(engine, monkeypatch)
    resumable.translate_file(engine, src, whole, REQUESTS[kind](), "m")
    assert straight == [3, 4, 4, 4, 4, 2, 4, 4]  # chunks of 20 and 10 lines, one blank

    out = tmp / "out.en"
    counted(engine, monkeypatch, stop_after=3)
    with pytest.raises(KeyboardInterrupt):
        resumable.translate_file(engine, src, out, REQUESTS[kind](), "m")
    partial, record, batches = resumable.stopped_files(out)
    assert json.loads(record.read_text())["lines"] == 0 and partial.read_bytes() == b""
    kept = [json.loads(line) for line in batches.read_text().splitlines()]
    assert [len(entry["rows"]) for entry in kept] == [3, 4, 4]
    with batches.open("a") as f:  # the stop cut a batch's line short
        f.write('{"job": "')

    again = counted(engine, monkeypatch)
    resumable.translate_file(engine, src, out, REQUESTS[kind](), "m")
    assert again == [4, 4, 2, 4, 4]  # the first chunk's last two batches, then the second's
    assert out.read_bytes() == whole.read_bytes()
    assert not (partial.exists() or record.exists() or batches.exists())


def test_batches_kept_by_another_job_are_not_taken(engine, job, monkeypatch):
    """A stopped run's batches serve only the same input, model and settings."""
    src, tmp = job
    out = tmp / "out.en"
    counted(engine, monkeypatch, stop_after=3)
    with pytest.raises(KeyboardInterrupt):
        resumable.translate_file(engine, src, out, REQUESTS["beam"](), "m")
    again = counted(engine, monkeypatch)
    resumable.translate_file(engine, src, out, REQUESTS["beam"](), "another model")
    assert len(again) == 8
    counted(engine, monkeypatch, stop_after=3)
    with pytest.raises(KeyboardInterrupt):
        resumable.translate_file(engine, src, out, REQUESTS["beam"](), "m")
    again = counted(engine, monkeypatch)
    sampled = DecodeRequest(DecodeConfig(batch_size=4, max_len_b=6), 1, Sampling(5, None, 1.0, 3))
    resumable.translate_file(engine, src, out, sampled, "m")
    assert len(again) == 8 and not resumable.stopped_files(out)[2].exists()
