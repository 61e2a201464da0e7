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
