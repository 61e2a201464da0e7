"""One request cannot hurt another: a text that is not valid Unicode is a 422 naming its
field in both batching modes, the server goes on, and good requests beside bad ones get
their answers."""

import pytest
from serving import Server, post

from integration.test_serve import assert_error, concurrently, expected

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
