"""How the server's batcher groups requests (translator/serve/batching.py), with a stand-in
translator whose search takes a fixed time, so the grouping alone is under test."""

from __future__ import annotations

import asyncio
import threading
import time
from types import SimpleNamespace

from translator.config import DecodeConfig
from translator.inference import Translation
from translator.serve.batching import Batcher
from translator.serve.limits import Limits


class SlowEcho:
    """Answers each line in upper case after `seconds` per batch; keeps the batch sizes."""

    def __init__(self, seconds: float):
        self.cfg = SimpleNamespace(decode=DecodeConfig())
        self.seconds, self.batches = seconds, []

    def translate(self, lines, dc, nbest=1):
        self.batches.append(len(lines))
        time.sleep(self.seconds)
        return [[Translation(line.upper(), 0.0)] for line in lines]


def serve(translator, coroutine, **limits):
    batcher = Batcher(translator, Limits(max_queue=1000, batch_gap_ms=3, **limits))
    batcher.start()
    try:
        return asyncio.run(coroutine(batcher))
    finally:
        batcher.stop()


async def client(batcher: Batcher, name: str, requests: int, think: float) -> None:
    """Asks `requests` times, one after the other, `think` seconds apart."""
    for r in range(requests):
        out = await batcher.translate([f"{name} {r}"], 1, 1)
        assert [h.text for h in out[0]] == [f"{name.upper()} {r}"]
        await asyncio.sleep(think)


def test_clients_that_come_back_join_the_waiting_ones():
    """Two groups of 32 clients that started apart, each asking again 20 ms (more than the
    gap) after its answer: once both are waiting, a batch takes all 64 instead of the groups
    taking turns, batches of 32 each."""
    echo = SlowEcho(0.1)

    async def load(batcher):
        first = [asyncio.create_task(client(batcher, f"a{i}", 3, 0.02)) for i in range(32)]
        await asyncio.sleep(0.03)  # the first group's batch is being decoded
        second = [asyncio.create_task(client(batcher, f"b{i}", 3, 0.02)) for i in range(32)]
        await asyncio.gather(*first, *second)

    serve(echo, load, batch_size=64, batch_wait_ms=2000)
    assert echo.batches[0] == 32
    assert echo.batches[1] == 64, echo.batches
    assert sum(echo.batches) == 64 * 3


def test_a_lone_client_is_not_kept_waiting():
    """One client at a time: each batch is its own request, decoded without waiting for the
    long deadline (2 s) for others."""
    echo = SlowEcho(0.01)

    async def load(batcher):
        start = time.monotonic()
        await client(batcher, "x", 5, 0.0)
        return time.monotonic() - start

    seconds = serve(echo, load, batch_size=64, batch_wait_ms=2000)
    assert echo.batches == [1] * 5
    assert seconds < 1.0  # one wait for the deadline alone would be 2 s


def test_a_group_that_does_not_come_back_waits_at_most_the_deadline():
    """Under load the next batch waits for the clients just answered; if they never ask
    again, the waiting requests are decoded once batch_wait_ms have passed."""
    echo = SlowEcho(0.1)

    async def load(batcher):
        one = [asyncio.create_task(client(batcher, f"a{i}", 1, 0)) for i in range(8)]
        await asyncio.sleep(0.03)
        two = [asyncio.create_task(client(batcher, f"b{i}", 1, 0)) for i in range(8)]
        start = time.monotonic()
        await asyncio.gather(*one, *two)
        return time.monotonic() - start

    seconds = serve(echo, load, batch_size=64, batch_wait_ms=300)
    assert echo.batches == [8, 8]
    assert 0.3 <= seconds < 2.0  # the second batch waited for the deadline, then decoded


def test_run_decodes_on_the_calling_thread():
    """`translator serve` decodes on its main thread (run), the event loop elsewhere; stop
    from the event loop's side ends run once the requests in flight are answered."""
    echo = SlowEcho(0.01)
    threads = []
    real = echo.translate

    def translate(lines, dc, nbest=1):
        threads.append(threading.current_thread())
        return real(lines, dc, nbest)

    echo.translate = translate
    batcher = Batcher(echo, Limits(batch_gap_ms=3))

    async def load():
        await asyncio.gather(*(client(batcher, f"c{i}", 2, 0.0) for i in range(4)))

    def http():
        try:
            asyncio.run(load())
        finally:
            batcher.stop()

    other = threading.Thread(target=http)
    other.start()
    batcher.run()  # returns once stop() was called
    other.join()
    assert sum(echo.batches) == 8
    assert threads and set(threads) == {threading.current_thread()}
