"""One request cannot hurt another: a text that is not valid Unicode is a 422 naming its
field in both batching modes, the server goes on, and good requests beside bad ones get
their answers."""

import pytest
from serving import Server, assert_error, concurrently, expected, post, req

pytest.importorskip("fastapi", reason="the `serve` extra (fastapi) is not installed")

SURROGATE = "Ein Hund \ud800 läuft."  # valid JSON ("\ud800"), not a character


@pytest.fixture(scope="module", params=["batch", "continuous"])
def any_server(request, transformer, tmp_path_factory):
    log = tmp_path_factory.mktemp("isolation") / "server.log"
    srv = Server(transformer[0], log, "--batching", request.param, "--timeout", "20")
    yield srv
    srv.stop()


@pytest.mark.parametrize(
    "body, field",
    [
        ({"text": SURROGATE}, "text"),
        ({"texts": ["Ein Hund läuft.", SURROGATE]}, "texts.1"),
        ({"text": "Ein Hund läuft.", "prefix": "\udfff"}, "prefix"),
        ({"text": "Ein Hund läuft.", "constraints": ["a\ud800"], "beam": 2}, "constraints.0"),
        ({"text": "Ein Hund läuft.", "terms": {"Hund": "\ud800"}}, "terms.Hund"),
        ({"text": "Ein Hund läuft.", "tgt_lang": "\ud800"}, "tgt_lang"),
    ],
)
def test_a_lone_surrogate_is_a_422_naming_its_field_and_the_server_goes_on(
    any_server, transformer, body, field
):
    assert_error(post(any_server.url + "/translate", body), 422, field, "Unicode")
    assert any_server.proc.poll() is None, any_server.log()
    _, translator = transformer
    want = [h[0].text for h in expected(translator, ["Ein Hund läuft."], 2)]
    status, answer, raw = post(any_server.url + "/translate", {"text": "Ein Hund läuft."})
    assert status == 200, raw
    assert answer["translations"] == want


def test_score_and_attention_check_their_texts_too(any_server):
    bad = post(any_server.url + "/score", {"sources": ["a"], "targets": ["\ud800"]})
    assert_error(bad, 422, "targets.0")
    assert_error(post(any_server.url + "/attention", {"text": SURROGATE}), 422, "text")
    # each character three byte-fallback pieces: more than the model reads, never cut
    long = post(any_server.url + "/attention", {"text": "\u6f22" * 600})
    assert_error(long, 413, "text 0 is", "subwords")
    assert_error(post(any_server.url + "/attention", {"text": "\u200b"}), 422, "empty")


def test_good_requests_beside_bad_ones_are_all_answered(any_server, transformer):
    """Good and bad requests at once, so they share batches (and streams): every good one
    gets its translation, every bad one its own 422."""
    _, translator = transformer
    texts = ["Ein Hund läuft.", "Das Kind trinkt Wasser.", "Zwei Katzen spielen im Garten."]
    want = {t: h[0].text for t, h in zip(texts, expected(translator, texts, 2))}

    def work(i):
        if i % 2:
            return post(any_server.url + "/translate", {"texts": [texts[i % 3], SURROGATE]})
        return post(any_server.url + "/translate", {"text": texts[i % 3]})

    answers = concurrently(12, work)
    for i, (status, body, raw) in enumerate(answers):
        if i % 2:
            assert status == 422, raw
        else:
            assert status == 200, raw
            assert body["translations"] == [want[texts[i % 3]]]
    assert any_server.proc.poll() is None, any_server.log()


def test_a_requests_cpu_work_runs_off_the_event_loop(transformer, monkeypatch):
    """Parsing a glossary and tokenizing prefixes happen on a worker thread, never on the
    thread that runs the event loop (here the test's own)."""
    import asyncio
    import threading

    from translator.decode.guide import Guides
    from translator.serve import app as app_module
    from translator.serve import parse
    from translator.serve.batcher import Batcher
    from translator.serve.limits import Limits
    from translator.serve.requests import TranslateRequest

    path, translator = transformer
    threads = []

    def recorded(fn):
        def run(*args, **kwargs):
            threads.append((fn.__name__, threading.current_thread()))
            return fn(*args, **kwargs)

        return run

    for name in ("Terms", "starts"):  # (starts: the languages' source ids)
        monkeypatch.setattr(parse, name, recorded(getattr(parse, name)))
    monkeypatch.setattr(Guides, "read", recorded(Guides.read))  # tokenizing prefixes, phrases
    limits = Limits()
    batcher = Batcher(translator, limits)
    door = parse.Door(translator, limits, translator.cfg.decode)
    app = app_module.create_app(translator, path, limits, batcher, door).app
    endpoint = next(r.endpoint for r in app.routes if getattr(r, "path", "") == "/translate")
    req = TranslateRequest(text="Ein Hund läuft.", prefix="A", terms={"Katze": "cat"})
    decoder = threading.Thread(target=batcher.run)
    decoder.start()
    try:
        answer = asyncio.run(endpoint(req))
    finally:
        batcher.stop()
        decoder.join()
    assert len(answer["translations"]) == 1
    assert {name for name, _ in threads} == {"Terms", "read", "starts"}
    assert all(thread is not threading.main_thread() for _, thread in threads), threads


def heaviest_glossary_request() -> dict:
    """The most glossary matching one request may ask for under the default limits: 1,000
    terms (none of them found, so nothing to search) over 256 texts of 2,000 characters (blank,
    so nothing to decode either): about 0.2 s of CPU on a worker thread."""
    terms = {f"quelle{i:04d}x": f"ziel{i:04d}y" for i in range(1000)}
    return {"texts": [" " * 2000] * 256, "terms": terms}


def test_health_answers_while_the_largest_glossaries_are_parsed(any_server):
    """/health, asked again and again over one connection while four of the heaviest
    allowed glossaries are parsed, is answered while they are: several answers come back
    before the first of the heavy requests does (a blocked event loop would answer none).
    Checked by order, not by a time limit, which would depend on the machine's pace."""
    import http.client
    import json
    import threading
    import time

    body = json.dumps(heaviest_glossary_request()).encode()
    assert len(body) <= 1_000_000
    answer, finished = [], []

    def heavy():
        conn = http.client.HTTPConnection("127.0.0.1", any_server.port, timeout=120)
        conn.request("POST", "/translate", body, {"Content-Type": "application/json"})
        answer.append(conn.getresponse().status)
        finished.append(time.perf_counter())

    conn = http.client.HTTPConnection("127.0.0.1", any_server.port, timeout=60)
    senders = [threading.Thread(target=heavy) for _ in range(4)]
    for sender in senders:
        sender.start()
    answered = []
    while any(sender.is_alive() for sender in senders):
        conn.request("GET", "/health")
        response = conn.getresponse()
        response.read()
        assert response.status == 200
        answered.append(time.perf_counter())
        time.sleep(0.005)
    assert answer == [200] * 4
    before = [t for t in answered if t < min(finished)]
    assert len(before) >= 3, (len(before), len(answered))


def test_a_glossary_over_the_limit_is_a_413_naming_terms(any_server):
    body = {"text": "Ein Hund läuft.", "terms": {f"w{i}": "x" for i in range(1001)}}
    assert_error(post(any_server.url + "/translate", body), 413, "terms", "1000")


@pytest.mark.parametrize("mode", ["batch", "continuous"])
def test_the_decoding_loop_outlives_a_text_that_cannot_be_encoded(transformer, mode):
    """Past the door's check (called on the batcher directly): a text the tokenizer cannot
    encode fails its own request; requests beside it get their translations, and the loop
    goes on to answer the next one."""
    import asyncio
    import threading

    from translator.serve.limits import Limits
    from translator.serve.streaming import make_batcher

    _, translator = transformer
    good = ["Ein Hund läuft.", "Das Kind trinkt Wasser."]
    want = [h[0].text for h in expected(translator, good, 2)]
    limits = Limits(batching=mode, timeout=20, batch_wait_ms=300, batch_gap_ms=100)
    batcher = make_batcher(translator, limits)
    decoder = threading.Thread(target=batcher.run)
    decoder.start()

    async def load():
        together = await asyncio.gather(
            batcher.translate([good[0]], req(2, 1, decode=translator.cfg.decode)),
            batcher.translate([SURROGATE], req(2, 1, decode=translator.cfg.decode)),
            batcher.translate([good[1]], req(2, 1, decode=translator.cfg.decode)),
            return_exceptions=True,
        )
        return together, await batcher.translate(good, req(2, 1, decode=translator.cfg.decode))

    try:
        (first, bad, second), after = asyncio.run(load())
    finally:
        batcher.stop()
        decoder.join(timeout=60)
    assert isinstance(bad, Exception) and getattr(bad, "status", None) != 503, bad
    assert [first[0][0].text, second[0][0].text] == want
    assert [hyps[0].text for hyps in after] == want
