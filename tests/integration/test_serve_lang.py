"""`translator serve` of a model with several target languages (untrained: the answers are
checked against the translator's own for the same language tag): each request names its
language or gets the server's --tgt-lang, mistakes are one-line 400s, and the page offers a
menu of the languages only for such a model."""

import urllib.parse

import pytest
from browser import Browser, chromium
from checkpoints import multilingual_checkpoint as checkpoint
from serving import Server, assert_error, concurrently, get, post
from util import assert_user_error, at_once, cli

from translator.decode.request import DecodeRequest
from translator.engines.load import load_engine

pytest.importorskip("fastapi", reason="the `serve` extra (fastapi) is not installed")
pytest.importorskip("uvicorn", reason="the `serve` extra (uvicorn) is not installed")

TEXTS = ["Ein Hund läuft.", "Die alte Frau liest ein Buch.", "Zwei Katzen spielen."]


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    root = tmp_path_factory.mktemp("serve-lang")
    return checkpoint(root / "multi.pt", ["de-en", "de-fr"]), checkpoint(root / "one.pt")


@pytest.fixture(scope="module")
def engines(models):
    """Per language, the engine loaded for it, whose answers the server's must equal."""
    return {lang: load_engine(models[0], "cpu", tgt_lang=lang) for lang in ("en", "fr")}


@pytest.fixture(scope="module")
def server(models, tmp_path_factory):
    srv = Server(models[0], tmp_path_factory.mktemp("log") / "server.log")
    yield srv
    srv.stop()


def scores(engine, texts, beam=2) -> list[float]:
    found = engine.translate(texts, DecodeRequest(engine.cfg.decode.replace(beam=beam)))
    return [round(hyps[0].score, 4) for hyps in found]


def ask(url: str, lang: str | None, texts=TEXTS, **more):
    body = {"texts": texts, "beam": 2, **more, **({"tgt_lang": lang} if lang else {})}
    return post(url + "/translate", body)


def check_languages(url: str, engines, langs: list, default: str | None = None) -> None:
    """Concurrent requests, one per language of `langs` (None: `default`), each get their
    own language's answers."""
    answers = concurrently(len(langs), lambda i: ask(url, langs[i], [TEXTS[i % 3]]))
    for i, (lang, (status, body, raw)) in enumerate(zip(langs, answers)):
        want = scores(engines[lang or default], [TEXTS[i % 3]])
        assert status == 200 and body["scores"] == pytest.approx(want, abs=2e-3), (lang, raw)
    assert scores(engines["en"], TEXTS) != scores(engines["fr"], TEXTS)  # the test can tell


def test_each_request_names_its_target_language(server, engines):
    health = get(server.url + "/health")[1]
    assert health["target_languages"] == ["en", "fr"] and health["tgt_lang"] is None
    for lang in ("en", "fr"):
        status, body, raw = ask(server.url, lang)
        want = scores(engines[lang], TEXTS)
        assert status == 200 and body["scores"] == pytest.approx(want, abs=2e-3), raw
    check_languages(server.url, engines, ["en", "fr", "fr", "en", "fr", "en"])
    status, att, raw = post(server.url + "/attention", {"text": TEXTS[0], "tgt_lang": "fr"})
    assert status == 200 and att["source"][0] == "<2fr>", raw
    pair = {"sources": TEXTS[:1], "targets": ["A dog runs."]}
    got = {lang: post(server.url + "/score", {**pair, "tgt_lang": lang})[1] for lang in engines}
    for lang, engine in engines.items():
        want = engine.score(pair["sources"], pair["targets"])[0].as_dict()["logprob"]
        assert got[lang]["scores"][0]["logprob"] == pytest.approx(want, abs=1e-3)
    assert got["en"] != got["fr"]


def test_a_missing_or_unknown_language_is_a_400(server):
    for path, body in [
        ("/translate", {"text": TEXTS[0]}),
        ("/attention", {"text": TEXTS[0]}),
        ("/score", {"sources": TEXTS[:1], "targets": ["A dog."]}),
    ]:
        assert_error(post(server.url + path, body), 400, "give tgt_lang (one of en, fr)")
        unknown = {**body, "tgt_lang": "xx"}
        assert_error(post(server.url + path, unknown), 400, "tgt_lang xx", "languages: en, fr")


def test_tgt_lang_is_the_default_of_a_continuous_server(models, engines, tmp_path):
    options = ["--tgt-lang", "fr", "--batching", "continuous", "--batch-size", "8"]
    srv, refused = at_once(
        lambda: Server(models[0], tmp_path / "log", *options),
        lambda: cli("serve", "--checkpoint", models[0], "--tgt-lang", "de", "--port", "0"),
    )
    try:
        assert get(srv.url + "/health")[1]["tgt_lang"] == "fr"
        check_languages(srv.url, engines, ["en", "fr", None, "fr", "en", None], "fr")
        assert_error(ask(srv.url, "de"), 400, "tgt_lang de", "languages: en, fr")
        assert "Traceback" not in srv.log()
    finally:
        srv.stop()
    assert_user_error(refused, "--tgt-lang de", "languages: en, fr")


def test_a_single_target_model_is_served_as_before(models, tmp_path):
    srv = Server(models[1], tmp_path / "log")
    try:
        health = get(srv.url + "/health")[1]
        assert health["target_languages"] == ["en"] and health["tgt_lang"] is None
        want = scores(load_engine(models[1], "cpu"), TEXTS)
        for lang in (None, "en"):
            status, body, raw = ask(srv.url, lang)
            assert status == 200 and body["scores"] == pytest.approx(want, abs=2e-3), raw
        assert_error(ask(srv.url, "fr"), 400, "tgt_lang fr", "languages: en")
    finally:
        srv.stop()


def page(url: str, profile, **query) -> Browser:
    """The page in headless Chromium once it has answered its first translation."""
    if chromium() is None:
        pytest.skip("chromium is not installed (apt-get install chromium): page not run")
    browser = Browser(str(profile))
    browser.open(f"{url}/?{urllib.parse.urlencode({'text': TEXTS[1], 'beam': 2, **query})}")
    try:  # the translation, then its heatmap
        browser.wait_for("document.getElementById('status').textContent.includes('ms')")
        browser.wait_for("!!document.querySelector('#source-pieces .piece')")
    except BaseException:
        browser.close()
        raise
    return browser


SHOWN = """(() => ({
  menu: !document.getElementById('tgt-lang-label').hidden,
  langs: [...document.getElementById('tgt-lang').options].map((o) => o.value),
  lang: document.getElementById('tgt-lang').value,
  score: document.querySelector('#nbest li .score')?.textContent,
  first: document.querySelector('#source-pieces .piece')?.textContent,
  error: document.getElementById('status').className,
}))()"""


def test_the_page_offers_the_target_languages(server, engines, tmp_path):
    browser = page(server.url, tmp_path, tgt_lang="fr")
    try:
        shown = browser.run(SHOWN)
        assert shown["menu"] and shown["langs"] == ["en", "fr"] and shown["lang"] == "fr"
        assert shown["first"] == "<2fr>" and not shown["error"]
        assert float(shown["score"]) == pytest.approx(
            scores(engines["fr"], TEXTS[1:2])[0], abs=2e-3
        )
        browser.run(
            "(() => { const menu = document.getElementById('tgt-lang'); menu.value = 'en';"
            " menu.dispatchEvent(new Event('change')); })()"
        )
        browser.wait_for("document.querySelector('#source-pieces .piece')?.textContent === '<2en>'")
        shown = browser.run(SHOWN)
        assert float(shown["score"]) == pytest.approx(
            scores(engines["en"], TEXTS[1:2])[0], abs=2e-3
        )
    finally:
        browser.close()


def test_the_page_has_no_menu_for_one_target_language(models, tmp_path):
    srv = Server(models[1], tmp_path / "log")
    try:
        browser = page(srv.url, tmp_path / "profile")
        try:
            shown = browser.run(SHOWN)
            assert not shown["menu"] and shown["langs"] == [] and not shown["error"]
            assert shown["first"] != "<2en>"
        finally:
            browser.close()
    finally:
        srv.stop()
