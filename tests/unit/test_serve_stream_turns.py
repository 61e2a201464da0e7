"""Continuous batching (translator/serve/streaming.py) with a stand-in stream whose
sentences each take as many steps as they have characters: how requests share its rows."""

from __future__ import annotations

import asyncio
import threading
from collections import deque
from types import SimpleNamespace

from serving import req

from translator.config import DecodeConfig
from translator.decode.translator import Translation
from translator.serve.limits import Limits
from translator.serve.streaming import StreamBatcher


class CountingStream:
    """At most `capacity` sentences decode at once (its own queue holds the rest, as
    BeamStream's does); each ends after one step per character, answered in upper case."""

    def __init__(self, capacity: int, log: list, gate: threading.Event):
        self.capacity, self.log, self.gate = capacity, log, gate
        self.waiting: deque = deque()
        self.rows: list = []  # [owner, text, steps left]
        self.advanced = 0

    def __len__(self) -> int:
        return len(self.waiting) + len(self.rows)

    def add(self, texts, owners, request):
        todo = [i for i, text in enumerate(texts) if text.strip()]
        self.waiting.extend([owners[i], texts[i], len(texts[i])] for i in todo)
        return todo

    def step(self):
        if len(self.log) == 1:  # the second step waits for the test's cue
            assert self.gate.wait(30)
        while self.waiting and len(self.rows) < self.capacity:
            self.rows.append(self.waiting.popleft())
        self.log.append(sorted(row[1][0] for row in self.rows))  # who holds the rows
        for row in self.rows:
            row[2] -= 1
        ended = [row for row in self.rows if row[2] == 0]
        self.rows = [row for row in self.rows if row[2] > 0]
        self.advanced += len(self.rows) + len(ended)
        return [(owner, [Translation(text.upper(), 0.0)]) for owner, text, _ in ended]

    def owners(self):
        return [row[0] for row in [*self.waiting, *self.rows]]


class Streaming:
    def __init__(self):
        self.cfg = SimpleNamespace(decode=DecodeConfig())
        self.capabilities = SimpleNamespace(streaming=True)
        self.log: list = []  # per step: the first letters of the sentences decoding
        self.gate = threading.Event()

    def stream(self, request, capacity, cancelled, nbest_of):
        return CountingStream(capacity, self.log, self.gate)


def test_a_request_that_comes_later_shares_the_rows_with_a_big_one():
    """Two rows; a big request of 20 sentences of 19 steps, then a small one, queued during
    the big one's first step: the small one takes a row as soon as the first two big
    sentences leave theirs, instead of after all 20 have joined (step 190), and every
    sentence is answered as its own."""
    engine = Streaming()
    batcher = StreamBatcher(engine, Limits(batching="continuous", batch_size=2, batch_gap_ms=3))
    big = [f"b{k:02d}" + "x" * 16 for k in range(20)]  # 19 characters

    async def load():
        first = asyncio.ensure_future(batcher.translate(big, req(1, 1)))
        while not engine.log:  # the big one decodes
            await asyncio.sleep(0.001)
        second = asyncio.ensure_future(batcher.translate(["s", " "], req(1, 1)))
        await asyncio.sleep(0)  # the small one is queued
        engine.gate.set()
        return await first, await second

    decoder = threading.Thread(target=batcher.run)
    decoder.start()
    try:
        whole, small = asyncio.run(load())
    finally:
        batcher.stop()
        decoder.join()
    assert [h[0].text for h in whole] == [text.upper() for text in big]
    assert [h[0].text for h in small] == ["S", ""]  # the blank one answered as given
    assert engine.log[19] == ["b", "s"], engine.log[19]
    assert sum(rows == ["b", "s"] for rows in engine.log) == 1
    assert len(engine.log) == 10 * 19 + 1  # the big one's ten pairs of rows, and one step
