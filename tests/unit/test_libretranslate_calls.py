"""A document translated for a LibreTranslate request calls the batcher from a worker
thread (libretranslate_io.Calls): given up, the call in flight is cancelled, so the
decoder drops its job, and the thread's next call is refused at once."""

import asyncio
import threading

import pytest

from translator.serve.libretranslate_io import Calls
from translator.serve.limits import LimitError


def test_giving_up_cancels_the_call_in_flight_and_refuses_the_next():
    started, cancelled, seen = threading.Event(), threading.Event(), []

    async def slow():
        started.set()
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            cancelled.set()  # where the batcher marks its job abandoned
            raise

    async def ok():
        return "done"

    def worker(calls: Calls):
        seen.append(calls.result(ok()))
        try:
            calls.result(slow())
        except BaseException as err:  # concurrent.futures' CancelledError
            seen.append(type(err).__name__)
        with pytest.raises(LimitError) as refused:
            calls.result(ok())
        seen.append(refused.value.status)

    async def main():
        calls = Calls(asyncio.get_running_loop())
        thread = threading.Thread(target=worker, args=(calls,))
        thread.start()
        while not started.is_set():
            await asyncio.sleep(0.01)
        calls.give_up()
        while thread.is_alive():
            await asyncio.sleep(0.01)

    asyncio.run(main())
    assert seen == ["done", "CancelledError", 503]
    assert cancelled.is_set()


def test_a_sentence_too_long_for_a_model_is_translated_in_pieces():
    from types import SimpleNamespace

    from translator.decode.translator import Translation
    from translator.documents.units import LONGEST
    from translator.serve.libretranslate import LibreTranslate

    sent = []

    async def translate(sentences, request):
        sent.extend(sentences)
        return [[Translation(s.upper(), 0.0), Translation(s, -1.0)] for s in sentences]

    owner = SimpleNamespace(batcher=SimpleNamespace(translate=translate))
    long = " ".join(f"w{i}," for i in range(LONGEST + 10))
    out = asyncio.run(LibreTranslate.long_sentences(owner, ["Ein Hund.", long], None))
    assert out == [["EIN HUND.", "Ein Hund."], [long.upper()]]  # one hypothesis, joined
    assert [len(s.split()) for s in sent] == [2, LONGEST, 10]


def test_splitting_waits_in_the_servers_queue_and_stops_once_given_up():
    """A request's sentence splitting runs on the server's OffLoop worker: a full queue is a
    429 before any work, and a timed-out request stops between its texts."""
    from types import SimpleNamespace

    from translator.serve.libretranslate import LibreTranslate, split_texts
    from translator.serve.limits import Limits
    from translator.serve.requests import Cancelled, OffLoop

    full = SimpleNamespace(off_loop=OffLoop(Limits(max_queue=0)))
    with pytest.raises(LimitError) as refused:
        de = SimpleNamespace(code="de")
        asyncio.run(LibreTranslate.plain(full, ["Ein Hund. Eine Katze."], de, None, 0))
    assert refused.value.status == 429

    asked = iter([False, True])
    with pytest.raises(Cancelled):
        split_texts(["Ein Hund. Eine Katze.", "Zwei Männer."], "de", lambda: next(asked))
    assert split_texts(["Ein Hund. Eine Katze."], "de", lambda: False) == [[(0, 9), (10, 21)]]
