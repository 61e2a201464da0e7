"""`translator serve` of an imported model of language codes (a tiny NLLB-style one that,
as NLLB-200, names no default target): the languages a request or a link names in any
spelling, and the defaults /health and LibreTranslate's settings report, are the model's
own codes; LibreTranslate's /detect says why it cannot answer for several sources."""

import contextlib
import urllib.parse
from types import SimpleNamespace

import pytest
from browser import Browser, chromium
from pretrained_m2m100 import nllb_folder
from serving import Server

from translator.config import DataConfig
from translator.engines.lang_codes import Codes

pytest.importorskip("fastapi", reason="the `serve` extra (fastapi) is not installed")
pytest.importorskip("transformers")

CODES = ["deu_Latn", "eng_Latn", "fra_Latn"]


@pytest.fixture(scope="module")
def nllb(tmp_path_factory):
    from translator.pretrained import import_pretrained

    root = tmp_path_factory.mktemp("nllb")
    import_pretrained(str(nllb_folder(root / "hf", tgt_lang=None)), root / "nllb.pt")
    return root / "nllb.pt"


@contextlib.contextmanager
def client(path, tgt_lang=None):
    """A TestClient of the app serving `path` as `serve --tgt-lang tgt_lang` would (these
    tests decode nothing, so no decoding loop runs)."""
    from fastapi.testclient import TestClient

    from translator.engines.load import load_engine
    from translator.serve.app import create_app
    from translator.serve.limits import Limits
    from translator.serve.parse import Door
    from translator.serve.streaming import make_batcher

    engine = load_engine(path, "cpu", tgt_lang=tgt_lang, any_language=True)
    limits, dc = Limits(), engine.cfg.decode
    door = Door(engine, limits, dc, tgt_lang=tgt_lang)
    app = create_app(engine, str(path), limits, make_batcher(engine, limits), door).app
    with TestClient(app) as test_client:
        yield test_client


def test_health_and_settings_report_the_defaults_as_the_models_codes(nllb):
    with client(nllb, tgt_lang="fr") as http:
        health = http.get("/health").json()
        assert health["target_languages"] == CODES and health["tgt_lang"] == "fra_Latn"
        language = http.get("/libretranslate/frontend/settings").json()["language"]
        assert language["source"]["code"] == "de" and language["target"]["code"] == "fr"
    with client(nllb) as http:  # no default target: the source's first one
        assert http.get("/health").json()["tgt_lang"] is None
        language = http.get("/libretranslate/frontend/settings").json()["language"]
        assert (language["source"]["code"], language["target"]["code"]) == ("de", "en")


def test_the_libretranslate_defaults_are_the_models():
    """An M2M100 model of defaults de -> en starts LibreTranslate's front end on them, not
    on the first of its languages; a model of one source on `auto`."""
    from translator.serve.libretranslate_langs import Languages

    def languages(codes, at, src, tgt):
        data = DataConfig(src_lang=src, tgt_lang=tgt)
        return Languages(SimpleNamespace(cfg=SimpleNamespace(data=data),
                                         language_codes=Codes(codes, at)))  # fmt: skip

    m2m100 = languages({"af": 1, "am": 2, "de": 3, "en": 4, "fr": 5}, "both", "de", "en")
    source, target = m2m100.defaults()
    assert (source.code, target.code) == ("de", "en")
    assert m2m100.defaults("fr-CA")[1].code == "fr"
    opus = languages({"deu": 1, "fra": 2, "ita": 3}, "source", "en", "fra")
    source, target = opus.defaults()
    assert source is None and target.code == "fr" and opus.defaults("it")[1].code == "it"


def test_a_language_is_resolved_to_the_models_code_and_detect_says_why_not(nllb):
    with client(nllb) as http:
        for spelling in ("fr", "fra_Latn", "fr-CA", "fra"):
            answer = http.get("/language", params={"tgt_lang": spelling})
            assert answer.status_code == 200 and answer.json() == {"tgt_lang": "fra_Latn"}
        answer = http.get("/language", params={"tgt_lang": "klingon"})
        assert answer.status_code == 400 and "tgt_lang klingon" in answer.json()["error"]
        assert all(code in answer.json()["error"] for code in CODES)
        answer = http.post("/libretranslate/detect", data={"q": "Hallo"})
        said = answer.json()["error"]
        assert answer.status_code == 400 and "/detect" in said and "name one" not in said
        assert "de, en, fr" in said and "/translate" in said


SHOWN = """(() => ({
  lang: document.getElementById('tgt-lang').value,
  status: document.getElementById('status').textContent,
  error: document.getElementById('status').className,
  translation: document.getElementById('translation').textContent,
}))()"""


def test_the_page_reads_a_links_language_in_any_spelling(nllb, tmp_path):
    if chromium() is None:
        pytest.skip("chromium is not installed (apt-get install chromium): page not run")
    srv = Server(str(nllb), tmp_path / "server.log", "--tgt-lang", "fr")
    try:
        for query, lang in [({"tgt_lang": "de"}, "deu_Latn"), ({}, "fra_Latn")]:
            browser = Browser(str(tmp_path / f"profile-{lang}"))
            try:
                ask = {"text": "Ein Hund läuft.", "beam": 1, **query}
                browser.open(f"{srv.url}/?{urllib.parse.urlencode(ask)}")
                browser.wait_for("document.getElementById('status').textContent.includes('ms')")
                shown = browser.run(SHOWN)
                assert shown["lang"] == lang and not shown["error"], shown
            finally:
                browser.close()
        browser = Browser(str(tmp_path / "profile-klingon"))
        try:  # a language the model lacks is named, and nothing is translated
            browser.open(f"{srv.url}/?text=Hallo&tgt_lang=klingon")
            browser.wait_for("document.getElementById('status').className === 'error'")
            shown = browser.run(SHOWN)
            assert "tgt_lang klingon" in shown["status"] and shown["lang"] == "fra_Latn"
            assert not shown["translation"], shown
        finally:
            browser.close()
    finally:
        srv.stop()
