"""The server and a model of several target languages: the batcher decodes requests of
different source prefixes (their language tags) apart, each with its own, and `translator
serve` starts without --tgt-lang (tests/integration/test_serve_lang.py: over HTTP and the
page)."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace

import pytest
from checkpoints import multilingual_checkpoint as checkpoint
from serving import req, with_batcher
from util import user_error

from translator.config import DecodeConfig
from translator.decode.translator import Translation

OWN = [3]  # the stand-in engine's own source prefix


class Recorder:
    """An engine that answers each line with the source prefix it was translated under;
    keeps (prefix, lines) per translate call."""

    def __init__(self, fail: str | None = None):
        self.cfg = SimpleNamespace(decode=DecodeConfig())
        self.calls, self.fail = [], fail

    def translate(self, lines, request, progress=False):
        prefix = list(OWN if request.source is None else request.source)
        self.calls.append((prefix, list(lines)))
        if self.fail in lines:
            raise RuntimeError("a bug")
        return [[Translation(f"{prefix}:{line}", 0.0)] for line in lines]


def serve(translator, coroutine, **limits):
    """coroutine(batcher) with the decoding loop on a thread of its own; a long wait lets
    every request join the first batch, which ends once `batch_size` sentences are in."""
    limits = {"batch_wait_ms": 60_000, "batch_gap_ms": 60_000, **limits}
    return with_batcher(translator, coroutine, **limits)


def texts(answer) -> list[str]:
    return [hyps[0].text for hyps in answer]


def test_requests_of_different_languages_share_no_translate_call():
    engine = Recorder()

    async def load(batcher):
        return await asyncio.gather(
            batcher.translate(["a", "b"], req(2, 1, source=[7])),
            batcher.translate(["c"], req(2, 1, source=[8, 5])),
            batcher.translate(["d"], req(2, 1, source=[7])),
            batcher.translate(["e"], req(2, 1)),  # the engine's own prefix
        )

    answers = serve(engine, load, batch_size=5)
    assert sorted(engine.calls) == [([3], ["e"]), ([7], ["a", "b", "d"]), ([8, 5], ["c"])]
    assert [texts(a) for a in answers] == [
        ["[7]:a", "[7]:b"],
        ["[8, 5]:c"],
        ["[7]:d"],
        ["[3]:e"],
    ]


def test_a_failed_call_leaves_the_next_request_its_own_prefix():
    engine = Recorder(fail="boom")

    async def load(batcher):
        with pytest.raises(RuntimeError):
            await batcher.translate(["boom"], req(1, 1, source=[9]))
        return await batcher.translate(["x"], req(1, 1))

    assert texts(serve(engine, load, batch_size=1)) == ["[3]:x"]


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    root = tmp_path_factory.mktemp("serve-lang")
    return checkpoint(root / "multi.pt", ["de-en", "de-fr"]), checkpoint(root / "one.pt")


def test_a_multilingual_model_is_served_without_a_default_language(models):
    from translator.engines.load import load_engine

    def _load(path, device, tag, tgt_lang):  # as translator serve opens its model
        return load_engine(path, device, tag=tag, tgt_lang=tgt_lang, any_language=True)

    multi, one = models
    engine = _load(multi, "cpu", None, None)
    assert engine.source_prefix == ()  # each request brings its language
    fr = engine.tokenizer.tag_ids(["<2fr>"])[0]
    assert fr and list(_load(multi, "cpu", None, "fr").source_prefix) == fr
    assert "en, fr" in user_error(_load, multi, "cpu", None, "xx")
    assert "--tgt-lang" in user_error(load_engine, multi, "cpu")  # as translate keeps it
    assert (
        _load(one, "cpu", None, None).source_prefix == load_engine(one, "cpu").source_prefix == ()
    )
    assert "its target languages: en" in user_error(_load, one, "cpu", None, "fr")
