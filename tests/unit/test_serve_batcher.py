"""The server's batcher (translator/serve/batcher.py) with a stand-in translator whose
search takes a fixed time: how it groups requests, and on which thread it decodes."""

from __future__ import annotations

import asyncio
import os
import signal
import threading
import time
from types import SimpleNamespace

from serving import req, with_batcher

from translator.config import DecodeConfig
from translator.decode.translator import Translation
from translator.errors import UserError
from translator.serve.batcher import Batcher
from translator.serve.limits import Limits


class SlowEcho:
    """Answers each line in upper case after `seconds` per batch; keeps the batch sizes and
    the threads that decoded them."""

    def __init__(self, seconds: float):
        self.cfg = SimpleNamespace(decode=DecodeConfig())
        self.seconds, self.batches, self.threads = seconds, [], []

    def translate(self, lines, request, progress=False):
        assert request.guides is None  # none asked for: none passed on
        self.batches.append(len(lines))
        self.threads.append(threading.current_thread())
        time.sleep(self.seconds)
        return [[Translation(line.upper(), 0.0)] for line in lines]


def serve(translator, coroutine, **limits):
    return with_batcher(translator, coroutine, **{"batch_gap_ms": 3, **limits})


async def client(batcher: Batcher, name: str, requests: int, think: float) -> None:
    """Asks `requests` times, one after the other, `think` seconds apart."""
    for r in range(requests):
        out = await batcher.translate([f"{name} {r}"], req(1, 1))
        assert [h.text for h in out[0]] == [f"{name.upper()} {r}"]
        await asyncio.sleep(think)


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


def test_run_decodes_on_the_calling_thread():
    """`translator serve` decodes on its main thread (run), the event loop elsewhere; stop
    from the event loop's side ends run once the requests in flight are answered."""
    echo = SlowEcho(0.01)
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
    assert echo.threads and set(echo.threads) == {threading.current_thread()}


def test_serve_decodes_on_the_main_thread_and_sigterm_stops_it():
    """`translator serve`'s arrangement: uvicorn (here a stand-in) on a thread of its own,
    decoding on the main thread; a SIGTERM asks the server to stop, and the decoding loop ends
    with it once the request in flight is answered; the signal handlers are given back."""
    from translator.commands.serve import _decode_here_serve_there

    echo = SlowEcho(0.01)
    batcher = Batcher(echo, Limits(batch_gap_ms=3))

    class StandIn:  # what of uvicorn.Server the command uses
        should_exit = started = False
        thread = answer = None

        def handle_exit(self, sig, frame):
            self.should_exit = True

        def run(self):
            self.thread, self.started = threading.current_thread(), True
            os.kill(os.getpid(), signal.SIGTERM)  # as `kill` from a shell would
            self.answer = asyncio.run(batcher.translate(["in flight"], req(1, 1)))
            while not self.should_exit:
                time.sleep(0.01)

    before = signal.getsignal(signal.SIGTERM)
    server = StandIn()
    _decode_here_serve_there(server, batcher)
    assert server.should_exit and server.answer[0][0].text == "IN FLIGHT"
    assert server.thread is not threading.main_thread()
    assert echo.threads == [threading.main_thread()]
    assert signal.getsignal(signal.SIGTERM) is before


class FailsOn(SlowEcho):
    """Refuses any batch that holds the line `bad`, as a search refuses an input it cannot
    take."""

    def translate(self, lines, request, progress=False):
        if "bad" in lines:
            raise UserError("bad: cannot be searched")
        return super().translate(lines, request, progress)


def test_a_request_that_fails_its_batch_fails_alone():
    """Requests decoded in one batch with one that cannot be searched get their answers; the
    culprit gets its own error."""
    echo = FailsOn(0.0)

    async def load(batcher):
        return await asyncio.gather(
            *(batcher.translate([t], req(1, 1)) for t in ("a", "bad", "c")), return_exceptions=True
        )

    answers = serve(echo, load, batch_size=64, batch_wait_ms=500, batch_gap_ms=200)
    assert echo.batches[-2:] == [1, 1]  # after the shared batch failed, each alone
    assert [h.text for h in answers[0][0]] == ["A"]
    assert isinstance(answers[1], UserError)
    assert [h.text for h in answers[2][0]] == ["C"]


def test_a_request_that_timed_out_while_another_decoded_is_dropped():
    """Two requests gathered together but searched apart (different beams): the second times
    out while the first decodes, and is dropped instead of decoded for nobody."""
    echo = SlowEcho(0.5)

    async def load(batcher):
        first = asyncio.create_task(batcher.translate(["a"], req(1, 1)))
        second = asyncio.create_task(batcher.translate(["b"], req(2, 1), timeout=0.2))
        return await asyncio.gather(first, second, return_exceptions=True)

    answers = serve(echo, load, batch_size=64, batch_wait_ms=300, batch_gap_ms=100)
    assert [h.text for h in answers[0][0]] == ["A"]
    assert getattr(answers[1], "status", None) == 503
    assert echo.batches == [1]


def test_a_big_request_given_up_on_stops_taking_the_decoder():
    """A request of many batches times out while its first calls decode: its other
    sentences are not decoded, and the next request is answered soon after."""
    echo = SlowEcho(0.3)

    async def load(batcher):
        big = [f"line {k}" for k in range(40)]  # ten batches of 4: five calls of two
        gone = await asyncio.gather(batcher.translate(big, req(1, 1), timeout=0.45),
                                    return_exceptions=True)  # fmt: skip
        return gone[0], await batcher.translate(["after"], req(1, 1))

    gone, after = serve(echo, load, batch_size=4)
    assert getattr(gone, "status", None) == 503
    assert [h.text for h in after[0]] == ["AFTER"]
    # the calls before it left and the one under way then (two at most), not all five
    assert echo.batches[-1] == 1 and echo.batches[:-1] in ([8], [8, 8]), echo.batches


def test_a_big_request_is_answered_whole_and_in_order():
    echo = SlowEcho(0.0)
    big = [f"line {'x' * (k % 7)} {k}" for k in range(30)]

    async def load(batcher):
        return await batcher.translate(big, req(1, 1))

    out = serve(echo, load, batch_size=4)
    assert [h[0].text for h in out] == [line.upper() for line in big]
    assert echo.batches == [8, 8, 8, 6]


def test_a_small_request_takes_turns_with_a_big_one():
    """A request that comes while a big one decodes call by call is answered after the call
    under way, not after all of the big one's calls; the big one is still answered whole."""
    echo = SlowEcho(0.1)
    big = [f"line {k}" for k in range(80)]  # ten calls of 8 (batches of 4, CHUNKS 2)
    answered = []

    async def ask(batcher, texts, delay):
        await asyncio.sleep(delay)
        out = await batcher.translate(texts, req(1, 1))
        answered.append(len(texts))
        return out

    async def load(batcher):
        return await asyncio.gather(ask(batcher, big, 0.0), ask(batcher, ["small"], 0.15))

    whole, small = serve(echo, load, batch_size=4)
    assert [h[0].text for h in whole] == [line.upper() for line in big]
    assert [h.text for h in small[0]] == ["SMALL"]
    assert answered == [1, 80]  # one after the other: [80, 1]
    assert sorted(echo.batches) == [1] + [8] * 10, echo.batches


def test_long_sentences_at_a_wide_beam_go_in_smaller_calls():
    """A call holds CHUNKS batches, or less where its sentences are long and its beam wide
    (CHUNK_WORK): a request of such sentences given up on stops after a short call."""
    from translator.serve.batcher import CHUNK_WORK, _chunks

    lines = ["x" * 10] * 6 + ["y" * CHUNK_WORK] * 4
    assert _chunks(list(range(10)), lines, 1, 8) == [list(range(8)), [8, 9]]
    assert _chunks(list(range(10)), lines, 4, 8) == [list(range(7)), [7, 8], [9]]
    echo = SlowEcho(0.3)

    async def load(batcher):
        long = ["z" * CHUNK_WORK * 2] * 8  # at beam 5 each its own call (budget 8 lines)
        gone = await asyncio.gather(batcher.translate(long, req(5, 1), timeout=0.45),
                                    return_exceptions=True)  # fmt: skip
        return gone[0], await batcher.translate(["after"], req(1, 1))

    gone, after = serve(echo, load, batch_size=4)
    assert getattr(gone, "status", None) == 503 and [h.text for h in after[0]] == ["AFTER"]
    assert echo.batches[-1] == 1 and echo.batches[:-1] in ([1], [1, 1]), echo.batches


class Broken(SlowEcho):
    """A bug outside any one request: every batch fails with a RuntimeError."""

    def translate(self, lines, request, progress=False):
        if "boom" in lines:
            raise RuntimeError("a bug")
        return super().translate(lines, request, progress)


def test_a_bug_fails_its_requests_and_the_decoding_loop_goes_on():
    echo = Broken(0.0)

    async def load(batcher):
        bad = await asyncio.gather(batcher.translate(["boom"], req(1, 1)), return_exceptions=True)
        return bad[0], await batcher.translate(["after"], req(1, 1)), batcher.pending

    bad, after, pending = serve(echo, load)
    assert isinstance(bad, RuntimeError)
    assert [h.text for h in after[0]] == ["AFTER"]
    assert pending == 0


class Stepping(SlowEcho):
    """Decodes in 100 steps of `seconds` each, asking between steps whether to go on, as
    the search loop does; keeps the steps each call took."""

    def translate(self, lines, request, progress=False):
        from translator.decode.loop import abandoned, stop_if

        check, steps = abandoned(), 0
        try:
            for _ in range(100):
                stop_if(check)
                steps += 1
                time.sleep(self.seconds)
        finally:
            self.batches.append(steps)
        return [[Translation(line.upper(), 0.0)] for line in lines]


def test_a_call_whose_clients_all_left_stops_mid_search():
    """A call stops at its next step once all its clients have left (one timed out, the
    other disconnected); a call with one client still waiting decodes to the end."""
    echo = Stepping(0.02)

    async def load(batcher):
        async def leaves():
            task = asyncio.ensure_future(batcher.translate(["b"], req(1, 1)))
            await asyncio.sleep(0.1)
            task.cancel()  # as a client's disconnect cancels its handler

        gone = await asyncio.gather(batcher.translate(["a"], req(1, 1), timeout=0.2),
                                    leaves(), return_exceptions=True)  # fmt: skip
        both = await asyncio.gather(batcher.translate(["c"], req(1, 1), timeout=0.2),
                                    batcher.translate(["d"], req(1, 1)), return_exceptions=True)  # fmt: skip
        return gone[0], both

    gone, both = serve(echo, load, batch_size=4, batch_wait_ms=50)
    assert getattr(gone, "status", None) == 503
    assert getattr(both[0], "status", None) == 503 and [h.text for h in both[1][0]] == ["D"]
    assert len(echo.batches) == 2 and echo.batches[0] < 100 and echo.batches[1] == 100
