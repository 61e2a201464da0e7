"""`translator serve` over real HTTP: a uvicorn subprocess on a free loopback port, answers
equal to the translator's own, 64 concurrent clients, every limit answered with one-line
JSON, and SIGTERM that loses no request (test_serve_page.py: target prefixes and the page)."""

import os
import signal
import threading
import time

import pytest
import requests
from serving import SENTENCES, Server, assert_error, concurrently, expected, get, post, request
from util import at_once, cli

pytest.importorskip("fastapi", reason="the `serve` extra (fastapi) is not installed")
pytest.importorskip("uvicorn", reason="the `serve` extra (uvicorn) is not installed")


def wait_until(srv: Server, ready) -> None:
    """Poll /health until ready(its JSON) holds (at most 30 s)."""
    deadline = time.monotonic() + 30
    while not ready(get(srv.url + "/health")[1]):
        assert time.monotonic() < deadline, "the server never reached the awaited state"


def test_answers_equal_the_translators_own(server, transformer):
    _, translator = transformer
    for beam in (1, 2):
        want = expected(translator, SENTENCES, beam)
        status, body, raw = post(server.url + "/translate", {"texts": SENTENCES, "beam": beam})
        assert status == 200, raw
        assert body["beam"] == beam
        assert body["translations"] == [r[0].text for r in want]
        assert len(set(body["translations"])) > 3  # not a constant output
        for text, r in zip(SENTENCES[:3], want):
            status, one, _ = post(server.url + "/translate", {"text": text, "beam": beam})
            assert status == 200 and one["translations"] == [r[0].text]
    status, body, _ = post(server.url + "/translate", {"texts": SENTENCES, "nbest": 3})
    want = expected(translator, SENTENCES, 3, nbest=3)
    assert status == 200 and body["beam"] == 3  # the beam grows to the n-best, as in the CLI
    for got, hyps in zip(body["nbest"], want):
        assert [g["text"] for g in got] == [h.text for h in hyps]
        assert [g["score"] for g in got] == pytest.approx([h.score for h in hyps], abs=1e-3)


def test_the_cli_gives_the_same_translations(server, transformer, here):
    result = here("translate", "--checkpoint", transformer[0], "--beam", "2", *SENTENCES[:4])
    assert result.returncode == 0, result.stderr
    _, body, _ = post(server.url + "/translate", {"texts": SENTENCES[:4], "beam": 2})
    assert body["translations"] == result.stdout.split("\n")[:-1]


def check_concurrent_clients(url: str, translator) -> dict:
    """64 clients at once, two beams among them: each gets its own answer; the /health
    counters over them."""
    texts = [f"{SENTENCES[i % 8]} {'Ein Hund.' * (i % 3)}".strip() for i in range(64)]
    by_beam = {beam: [r[0].text for r in expected(translator, texts, beam)] for beam in (1, 2)}
    want = [by_beam[1 + i % 2][i] for i in range(64)]  # two beams: two searches per batch

    def ask(i):
        return post(url + "/translate", {"text": texts[i], "beam": 1 + i % 2})

    before = get(url + "/health")[1]
    answers = concurrently(64, ask)
    assert [a[0] for a in answers] == [200] * 64
    assert [a[1]["translations"] for a in answers] == [[w] for w in want]
    assert [a[1]["beam"] for a in answers] == [1 + i % 2 for i in range(64)]
    after = get(url + "/health")[1]
    assert after["queued"] == 0
    return {key: after[key] - before[key] for key in ("sentences", "batches", "batch_sentences")}


def test_64_concurrent_clients_get_their_own_answers(server, transformer):
    counts = check_concurrent_clients(server.url, transformer[1])
    assert counts["sentences"] == counts["batch_sentences"] == 64
    assert counts["batches"] < 64  # requests were decoded together


def test_continuous_batching(transformer, tmp_path):
    """Sentences join the running search: the same answers as the CLI's, n-best too."""
    path, translator = transformer
    srv = Server(path, tmp_path / "log", "--batching", "continuous", "--batch-size", "16")
    try:
        counts = check_concurrent_clients(srv.url, translator)
        assert counts["sentences"] == 64
        assert counts["batch_sentences"] / counts["batches"] > 4  # decoded together,
        assert counts["batch_sentences"] > 64  # counted at every step each sentence took
        texts = [SENTENCES[0], " ", SENTENCES[1]]  # a blank one is answered without the model
        status, body, raw = post(srv.url + "/translate", {"texts": texts, "nbest": 3})
        want = expected(translator, texts, 3, nbest=3)
        assert status == 200 and body["translations"] == [r[0].text for r in want], raw
        for got, hyps in zip(body["nbest"], want):
            assert [g["text"] for g in got] == [h.text for h in hyps]
        assert "Traceback" not in srv.log()
    finally:
        srv.stop()
    result = cli("serve", "--checkpoint", path, "--batching", "sometimes")
    assert result.returncode == 2 and result.stderr.count("\n") == 1, result.stderr
    assert "--batching 'sometimes'" in result.stderr


def test_attention(server, transformer):
    _, translator = transformer
    status, body, raw = post(server.url + "/attention", {"text": SENTENCES[1], "beam": 2})
    assert status == 200, raw
    best = expected(translator, SENTENCES[1:2], 2)[0][0]
    assert body["translation"] == best.text
    assert body["source"][-1] == "</s>" and body["target"][-1] == "</s>"
    assert len(body["target"]) == len(best.tokens) + 1
    assert len(body["attention"]) == len(body["target"])
    for row in body["attention"]:
        assert len(row) == len(body["source"]) and sum(row) == pytest.approx(1, abs=0.01)
    assert_error(post(server.url + "/attention", {"text": "Hund", "layer": 7}), 422, "layer 7")
    assert_error(post(server.url + "/attention", {"text": "  "}), 422, "empty")


def test_score(server, transformer):
    _, translator = transformer
    targets = ["A dog runs.", "Two women walk.", ""]
    sources = SENTENCES[: len(targets)]
    status, body, raw = post(server.url + "/score", {"sources": sources, "targets": targets})
    assert status == 200, raw
    want = translator.score(sources, targets)
    assert [s["tokens"] for s in body["scores"]] == [s.tokens for s in want]
    for got, score in zip(body["scores"], want):
        assert got["logprob"] == pytest.approx(score.logprob, abs=1e-3)
        assert got["mean"] == pytest.approx(score.mean, abs=1e-3)
    assert_error(post(server.url + "/score", {"sources": sources, "targets": []}), 422, "3 sources")
    many = {"sources": ["a"] * 9, "targets": ["b"] * 9}
    assert_error(post(server.url + "/score", many), 413, "limit is 8")


def test_health_and_page(server):
    status, body, _ = get(server.url + "/health")
    assert status == 200
    assert body["family"] == "transformer" and body["parameters"] > 1000
    assert body["device"] == "cpu" and body["attention"] is True
    status, page, _ = get(server.url + "/")
    assert status == 200 and 'id="heatmap"' in page
    assert "http://" not in page and "https://" not in page  # nothing fetched from elsewhere
    assert get(server.url + "/openapi.json")[1]["paths"].keys() >= {"/translate", "/attention"}


def test_limits_and_bad_input_get_one_line_json_errors(server):
    url = server.url + "/translate"
    assert_error(post(url, {"text": "x" * 4000}), 413, "3000 bytes")
    assert_error(post(url, {"texts": ["Hund"] * 9}), 413, "9 texts", "8")
    assert_error(post(url, {"texts": ["Hund", "x" * 201]}), 413, "text 1", "201")
    assert_error(request("POST", url, b'{"text": "Hund'), 400, "not valid JSON")
    assert_error(request("POST", url, b'{"text": "Hund"}', "text/plain"), 400, "Content-Type")
    bare = requests.post(url, data=b'{"text": "Hund"}')  # (bytes: sent with no Content-Type)
    assert "content-type" not in bare.request.headers
    assert_error((bare.status_code, bare.json(), bare.content), 400, "as JSON with Content-Type")
    assert_error(post(url, ["Hund"]), 400, "must be a JSON object, not an array")
    assert_error(post(url, None), 400, "must be a JSON object, not null")
    assert_error(request("POST", url, b""), 400, "body is empty")
    unreadable = request("POST", url, b'{"text": "Hund \xff"}')
    assert_error(unreadable, 400, "not UTF-8, or nested too deeply")
    assert_error(post(url, {"text": 5}), 422, "text")
    assert_error(post(url, {"texts": "Hund"}), 422, "texts")
    assert_error(post(url, {"texts": ["Hund", 3]}), 422, "texts.1")
    assert_error(post(url, {"text": "Hund", "beam": "2"}), 422, "beam")
    assert_error(post(url, {"text": "Hund", "beam": 0}), 422, "beam")
    assert_error(post(url, {"text": "Hund", "beam": 5}), 422, "limit of 4")
    assert_error(post(url, {"text": "Hund", "beam": 1, "nbest": 2}), 422, "nbest 2")
    assert_error(post(url, {"text": "Hund", "texts": ["Hund"]}), 422, "either")
    assert_error(post(url, {}), 422, "either")
    assert_error(post(url, {"text": "Hund", "color": 1}), 422, "color")
    assert_error(get(server.url + "/nowhere"), 404)
    for method, path, allowed in (("TRACE", "/health", "GET"), ("GET", "/translate", "POST")):
        wrong = requests.request(method, server.url + path)
        assert wrong.status_code == 405 and wrong.headers["allow"] == allowed
    assert post(url, {"text": "Hund"})[0] == 200  # and the server keeps serving
    assert "Traceback" not in server.log()


def test_full_queue_and_timeout(transformer, tmp_path):
    # A request waits 1 s for others to join it but may wait only 200 ms for its answer:
    # a lone request times out (503), and while three are waiting a fourth is turned away.
    options = [
        "--batch-wait-ms",
        "1000",
        "--batch-gap-ms",
        "1000",
        "--timeout",
        "0.2",
        "--max-queue",
        "3",
    ]
    srv = Server(transformer[0], tmp_path / "log", *options)
    try:
        url = srv.url + "/translate"
        assert_error(post(url, {"text": "Hund"}), 503, "0.2 s")
        wait_until(srv, lambda health: health["queued"] == 0)
        answers = concurrently(8, lambda i: post(url, {"text": SENTENCES[i]}))
        codes = sorted(a[0] for a in answers)
        assert codes.count(503) == 3 and codes.count(429) == 5, codes
        for answer in answers:
            assert_error(answer, answer[0], "queue is full" if answer[0] == 429 else "0.2 s")
        assert get(srv.url + "/health")[0] == 200
    finally:
        srv.stop()


def test_sigterm_answers_the_requests_in_flight(lstm, tmp_path):
    path, translator = lstm
    srv = Server(path, tmp_path / "log", "--batch-wait-ms", "1500", "--batch-gap-ms", "1500")
    try:
        # The LSTM has no attention: a clear error, not a crash.
        said = post(srv.url + "/attention", {"text": "Hund"})
        assert_error(said, 400, "it has no attention; serve a Transformer")
        assert "exported" not in said[1]["error"]
        want = [r[0].text for r in expected(translator, SENTENCES, 2)]
        answers = [None] * len(SENTENCES)

        def ask(i):
            answers[i] = post(srv.url + "/translate", {"text": SENTENCES[i]})

        threads = [threading.Thread(target=ask, args=(i,)) for i in range(len(SENTENCES))]
        for t in threads:
            t.start()
        wait_until(srv, lambda health: health["queued"] == len(SENTENCES))  # all in flight
        srv.proc.send_signal(signal.SIGTERM)
        for t in threads:
            t.join(timeout=60)
        assert [a[0] for a in answers] == [200] * len(SENTENCES)
        assert [a[1]["translations"][0] for a in answers] == want
        assert srv.proc.wait(timeout=30) == 0, srv.log()
    finally:
        srv.stop()


def test_an_exported_model_serves_without_attention(server, transformer, tmp_path, here):
    pytest.importorskip("ctranslate2", reason="the `ctranslate2` extra is not installed")
    result = here("export", "--checkpoint", transformer[0], "--output", str(tmp_path / "ct2"))
    assert result.returncode == 0, result.stderr
    ct2 = str(tmp_path / "ct2")
    srv, refused = at_once(
        lambda: Server(ct2, tmp_path / "log"),
        lambda: cli("serve", "--checkpoint", ct2, "--batching", "continuous", "--port", "0"),
    )
    try:
        assert get(srv.url + "/health")[1]["engine"] == "ctranslate2"
        status, body, raw = post(srv.url + "/translate", {"texts": SENTENCES, "beam": 1})
        want = post(server.url + "/translate", {"texts": SENTENCES, "beam": 1})[1]
        assert status == 200 and body["translations"] == want["translations"], raw  # greedy
        assert_error(post(srv.url + "/attention", {"text": "Hund"}), 400, "exported")
    finally:
        srv.stop()
    assert refused.returncode == 2 and "needs a checkpoint" in refused.stderr, refused.stderr


def test_decoding_options_set_what_requests_get(transformer, tmp_path):
    path, translator = transformer
    options = ["--beam", "3", "--len-penalty", "0", "--max-len-a", "0", "--max-len-b", "2"]
    srv = Server(path, tmp_path / "log", *options, "--batch-size", "4")
    try:
        assert get(srv.url + "/health")[1]["beam"] == 3
        status, body, raw = post(srv.url + "/translate", {"texts": SENTENCES, "nbest": 2})
        assert status == 200 and body["beam"] == 3, raw
        dc = translator.cfg.decode.replace(beam=3, len_penalty=0.0, max_len_a=0.0, max_len_b=2)
        want = translator.translate(SENTENCES, translator.request(decode=dc, nbest=2))
        assert [[g["text"] for g in got] for got in body["nbest"]] == [
            [h.text for h in hyps] for hyps in want
        ]
        scores = [g["score"] for got in body["nbest"] for g in got]
        assert scores == pytest.approx([h.score for hyps in want for h in hyps], abs=1e-3)
        default = expected(translator, SENTENCES, 3, nbest=2)
        assert scores != pytest.approx([h.score for hyps in default for h in hyps], abs=1e-3)
    finally:
        srv.stop()
    result = cli("serve", "--checkpoint", path, "--beam", "5", "--max-beam", "4")
    last = result.stderr.strip().splitlines()[-1]
    assert result.returncode == 2 and last.startswith("error: "), result.stderr
    assert "--max-beam 4" in last and "5" in last, last


def test_serve_user_errors(server, transformer, tmp_path):
    result = cli("serve", "--checkpoint", str(tmp_path / "none.pt"))
    assert result.returncode == 2 and result.stderr.count("\n") == 1, result.stderr
    assert "none.pt" in result.stderr
    result = cli("serve", "--checkpoint", transformer[0], "--port", str(server.port))  # taken
    assert result.returncode == 2 and result.stderr.count("\n") == 1, result.stderr
    assert result.stderr.startswith(f"error: cannot serve on 127.0.0.1:{server.port}: ")
    (tmp_path / "fastapi.py").write_text("raise ImportError('no fastapi here')\n")
    path = f"{tmp_path}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"
    result = cli("serve", "--checkpoint", transformer[0], env_extra={"PYTHONPATH": path})
    assert result.returncode == 2 and result.stderr.count("\n") == 1, result.stderr
    assert 'pip install "translator[serve]"' in result.stderr
