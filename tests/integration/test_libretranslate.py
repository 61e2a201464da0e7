"""LibreTranslate's API under /libretranslate/ of a live `translator serve`: the clients
people run against it (libretranslatepy, deep-translator), requests shaped as Mastodon and
Weblate send them, files, keys, limits and errors, in both batching modes."""

import json
import re
import signal
import urllib.parse
import urllib.request

import pytest
import requests
from serving import (
    SENTENCES,
    Server,
    app_client,
    assert_error,
    concurrently,
    get,
    post,
    request,
)

KEY = "k3y-for-tests"


@pytest.fixture(scope="module")
def keyed(transformer, tmp_path_factory):
    """Whole batches, a key required."""
    log = tmp_path_factory.mktemp("lt-keyed") / "server.log"
    srv = Server(transformer[0], log, "--api-key", KEY, "--max-texts", "8")
    yield srv
    srv.stop()


@pytest.fixture(scope="module")
def streaming(transformer, tmp_path_factory):
    """Continuous batching, no key, a queue of one request."""
    log = tmp_path_factory.mktemp("lt-stream") / "server.log"
    srv = Server(transformer[0], log, "--batching", "continuous", "--max-queue", "1")
    yield srv
    srv.stop()


def lt(srv) -> str:
    return srv.url + "/libretranslate/"


def best(translator, texts: list[str]) -> list[str]:
    """What the server's own /translate gives each text at the model's beam."""
    dc = translator.cfg.decode
    from serving import req

    return [r[0].text for r in translator.translate(texts, req(dc.beam, decode=dc))]


def form(url: str, fields, method="POST"):
    return request(method, url, urllib.parse.urlencode(fields, doseq=True).encode(),
                   "application/x-www-form-urlencoded")  # fmt: skip


def test_the_clients_translate_with_a_key(keyed, transformer):
    from deep_translator import LibreTranslator
    from deep_translator.exceptions import AuthorizationException
    from libretranslatepy import LibreTranslateAPI

    want = best(transformer[1], SENTENCES[:3])
    api = LibreTranslateAPI(lt(keyed), api_key=KEY)
    assert api.translate(SENTENCES[0], "de", "en") == want[0]
    assert api.languages() == [
        {"code": "de", "name": "German", "targets": ["en"]},
        {"code": "en", "name": "English", "targets": []},
    ]
    deep = LibreTranslator(source="de", target="en", api_key=KEY, custom_url=lt(keyed))
    assert deep.translate(SENTENCES[1]) == want[1]
    assert deep.translate_batch(SENTENCES[:3]) == want
    wrong = LibreTranslator(source="de", target="en", api_key="nope", custom_url=lt(keyed))
    with pytest.raises(AuthorizationException):
        wrong.translate(SENTENCES[0])
    with pytest.raises(urllib.error.HTTPError) as err:
        LibreTranslateAPI(lt(keyed)).translate(SENTENCES[0], "de", "en")
    assert err.value.code == 403
    ask = {"q": SENTENCES[0], "source": "de", "target": "en"}
    assert_error(post(lt(keyed) + "translate", {**ask, "api_key": "x"}), 403, "Invalid API key")
    assert_error(post(lt(keyed) + "translate", ask), 403, "api_key")
    assert get(lt(keyed) + "languages")[0] == 200  # the language list needs no key
    assert "Traceback" not in keyed.log()


def mastodon_and_weblate(srv, translator) -> bool:
    """JSON with `q` a list of HTML, `source: auto`, through the doubled slash Mastodon
    builds; Weblate's JSON list and its older form fields; a text of two sentences. False
    where the server has no HTML (checked last)."""
    want = best(translator, SENTENCES[:4])
    base = srv.url + "/libretranslate/"
    status, body, raw = post(base + "/languages", {})  # Mastodon: base URL + "/languages"
    assert status == 200 and {"code": "de", "name": "German", "targets": ["en"]} in body, raw
    weblate = {"q": SENTENCES[:4], "source": "de", "target": "en", "api_key": ""}
    status, body, raw = post(base + "translate", weblate)
    assert status == 200 and body == {"translatedText": want}, raw
    status, body, raw = form(base + "translate", {"q": SENTENCES[2], "source": "de",
                                                   "target": "en"})  # fmt: skip
    assert status == 200 and body == {"translatedText": want[2]}, raw
    two = f"  {SENTENCES[0]} {SENTENCES[1]}\n\n{SENTENCES[3]}"
    status, body, raw = post(base + "translate", {"q": two, "source": "de", "target": "en"})
    assert body["translatedText"] == f"  {want[0]} {want[1]}\n\n{want[3]}", raw
    mastodon = {"q": [f"<p>{SENTENCES[3]}</p>"], "source": "auto", "target": "en",
                "format": "html", "api_key": ""}  # fmt: skip
    status, body, raw = post(base + "/translate", mastodon)
    if status == 400 and "html format is not supported" in body.get("error", ""):
        return False  # translator.documents.html is not installed
    assert status == 200, raw
    assert body["detectedLanguage"] == [{"confidence": 100.0, "language": "de"}]
    out = body["translatedText"][0]
    assert out.startswith("<p>") and out.endswith("</p>") and out.count("<") == 2, raw
    return True


def test_mastodon_and_weblate_requests_in_both_batching_modes(server, streaming, transformer):
    html = [mastodon_and_weblate(srv, transformer[1]) for srv in (server, streaming)]
    assert "Traceback" not in server.log() + streaming.log()
    if not all(html):
        pytest.skip("translator.documents.html is missing: format html was answered 400")


def test_errors_are_libretranslates_and_a_bad_request_stops_nothing(streaming, transformer):
    base = lt(streaming)
    ok = {"q": SENTENCES[0], "source": "de", "target": "en"}
    assert_error(post(base + "translate", {"source": "de", "target": "en"}), 400, "missing q")
    assert_error(post(base + "translate", {**ok, "target": "fr"}), 400, "fr is not supported")
    assert_error(post(base + "translate", {**ok, "source": "fr"}), 400, "fr", "reads de")
    assert_error(post(base + "translate", {**ok, "format": "pdf"}), 400, "pdf format")
    assert_error(post(base + "translate", {**ok, "q": [1, 2]}), 400, "list of strings")
    assert_error(post(base + "translate", {**ok, "alternatives": "x"}), 400, "not a number")
    assert_error(post(base + "translate", {**ok, "q": "\ud800"}), 400, "q: not valid Unicode")
    assert_error(post(base + "translate", {**ok, "q": ["a", "\udfff"]}), 400, "q.1: not valid")
    assert_error(request("POST", base + "translate", b"{not json"), 400, "JSON")
    assert_error(get(base + "translate"), 405)
    status, body, raw = post(base + "translate", ok)  # the server still answers
    assert status == 200 and body == {"translatedText": best(transformer[1], SENTENCES[:1])[0]}
    status, body, raw = post(base + "translate", {**ok, "alternatives": 1})
    assert status == 200 and isinstance(body["alternatives"], list), raw
    # texts without a letter come back as they are, beside a translated one
    numbers = {**ok, "q": ["42", SENTENCES[0], " 3,5 %\n2024-01-05"]}
    status, body, raw = post(base + "translate", numbers)
    want = ["42", best(transformer[1], SENTENCES[:1])[0], " 3,5 %\n2024-01-05"]
    assert status == 200 and body["translatedText"] == want, raw
    status, body, raw = post(base + "translate", {**ok, "q": "42", "alternatives": 2})
    assert status == 200 and body == {"translatedText": "42", "alternatives": []}, raw


def multipart(fields: list[tuple[str, str]], charset: str = "utf-8") -> bytes:
    """A multipart/form-data body (boundary `xx`) of text fields, each marked `charset`."""
    parts = [f'--xx\r\nContent-Disposition: form-data; name="{name}"\r\n'
             f"Content-Type: text/plain; charset={charset}\r\n\r\n{value}\r\n"
             for name, value in fields]  # fmt: skip
    return ("".join(parts) + "--xx--\r\n").encode()


def test_bodies_no_parser_takes_are_400s_and_forms_of_either_kind_agree(keyed, transformer):
    from translator.serve.libretranslate_io import MAX_PARTS

    url, kind = lt(keyed) + "translate", "multipart/form-data; boundary=xx"
    ask = [("source", "de"), ("target", "en"), ("api_key", KEY)]
    deep = b'{"q": ' + b"[" * 50_000 + b"]" * 50_000 + b"}"
    assert_error(request("POST", url, deep), 400, "nested too deeply")
    # a charset Python does not know is read as UTF-8
    status, body, raw = request("POST", url, multipart([("q", SENTENCES[0]), *ask], "x-no"), kind)
    assert status == 200 and body == {"translatedText": best(transformer[1], SENTENCES[:1])[0]}
    # a multipart form's `q` given twice is a list, as an urlencoded form's
    twice = multipart([("q", SENTENCES[1]), ("q", SENTENCES[2]), *ask])
    status, body, raw = request("POST", url, twice, kind)
    assert status == 200 and body == {"translatedText": best(transformer[1], SENTENCES[1:3])}
    form = "application/x-www-form-urlencoded"  # a %-escape of Latin-1, as a JSON byte is
    latin = f"q=Ein+Hund+l%E4uft.&source=de&target=en&api_key={KEY}".encode()
    assert_error(request("POST", url, latin, form), 400, "the form is not UTF-8")
    assert_error(request("POST", url + "?q=l%E4uft", latin, form), 400, "the query is not UTF-8")
    raw_latin = multipart([("q", "Ein Hund läuft."), *ask]).replace("ä".encode(), b"\xe4")
    assert_error(request("POST", url, raw_latin, kind), 400, "field 'q' is not UTF-8")
    huge = multipart([("q", "x")] * MAX_PARTS + ask)  # over the limit, refused before parsing
    assert_error(request("POST", url, huge, kind), 400, f"more than {MAX_PARTS} parts")
    assert "Traceback" not in keyed.log()


def test_odd_keys_alternatives_and_file_names(keyed):
    from translator.serve.limits import Limits

    url, ask = lt(keyed) + "translate", {"source": "de", "target": "en", "api_key": KEY}
    key = json.dumps({"q": SENTENCES[0], "source": "de", "target": "en", "api_key": "\ud800"})
    assert_error(request("POST", url, key.encode()), 403, "Invalid API key")
    most = Limits().max_beam - 1  # the beam holds the best and the alternatives
    alts = {**ask, "q": SENTENCES[0]}
    assert_error(post(url, {**alts, "alternatives": most + 1}), 400, f"must be <= {most}")
    assert post(url, {**alts, "alternatives": most})[0] == 200
    res = requests.post(lt(keyed) + "translate_file", data=ask,
                        files={"file": ("Übersicht.txt", SENTENCES[0].encode())})  # fmt: skip
    assert res.status_code == 200 and res.json()["translatedFileUrl"].endswith(".Ubersicht.txt")
    res = requests.post(lt(keyed) + "translate_file", data=ask,
                        files={"file": ("my notes.txt", SENTENCES[0].encode())})  # fmt: skip
    assert get(res.json()["translatedFileUrl"])[0] == 200  # urllib, which refuses a space
    assert "Traceback" not in keyed.log()


def test_libretranslates_older_codes_name_their_languages():
    from types import SimpleNamespace

    from translator.config import DataConfig
    from translator.engines.lang_codes import Codes
    from translator.serve.libretranslate_langs import Languages

    codes = {"deu_Latn": 1, "zho_Hans": 2, "zho_Hant": 3, "por_Latn": 4}
    data = DataConfig(src_lang="deu_Latn", tgt_lang="zho_Hans")
    langs = Languages(SimpleNamespace(cfg=SimpleNamespace(data=data),
                                      language_codes=Codes(codes, "both")))  # fmt: skip
    assert langs.find("zt").model == "zho_Hant" and langs.find("pb").model == "por_Latn"
    assert langs.find("zh-Hans").model == "zho_Hans" and langs.find("zh").model == "zho_Hans"
    assert langs.find("zh-TW").model == "zho_Hant" and langs.find("zh-CN").model == "zho_Hans"
    assert langs.find("zh-Hant-TW").model == "zho_Hant" and langs.find("pt-BR").model == "por_Latn"


def test_over_the_queue_is_a_429(streaming):
    long = " ".join(SENTENCES[1:5])
    ask = {"q": [long] * 8, "source": "de", "target": "en"}
    answers = concurrently(8, lambda i: post(lt(streaming) + "translate", ask))
    statuses = sorted(a[0] for a in answers)
    assert statuses[0] == 200 and statuses[-1] == 429, statuses
    for answer in answers:
        if answer[0] == 429:
            assert_error(answer, 429, "Slowdown")


def test_cors_preflight_and_headers(server):
    ask = urllib.request.Request(
        lt(server) + "translate", method="OPTIONS",
        headers={"Origin": "https://example.org", "Access-Control-Request-Method": "POST",
                 "Access-Control-Request-Headers": "content-type"},
    )  # fmt: skip
    with urllib.request.urlopen(ask, timeout=30) as res:
        assert res.status == 204
        assert res.headers["access-control-allow-origin"] == "*"
        assert "POST" in res.headers["access-control-allow-methods"]
        assert res.headers["access-control-allow-headers"] == "content-type"
    res = requests.get(lt(server) + "languages", headers={"Origin": "https://example.org"})
    assert res.headers["access-control-allow-origin"] == "*"
    # the server's own routes are not opened to other origins
    assert "access-control-allow-origin" not in requests.get(server.url + "/health").headers


def test_a_text_file_round_trip_and_its_download(keyed, transformer):
    want = best(transformer[1], SENTENCES[:2])
    text = f"{SENTENCES[0]}\n\n  {SENTENCES[1]}\n"
    fields = {"source": "de", "target": "en", "api_key": KEY}
    res = requests.post(lt(keyed) + "translate_file", data=fields,
                        files={"file": ("../../notes.txt", text.encode())})  # fmt: skip
    assert res.status_code == 200, res.text
    url = res.json()["translatedFileUrl"]
    assert url.startswith(lt(keyed) + "download_file/") and url.endswith(".notes.txt")
    got = requests.get(url)
    assert got.status_code == 200 and got.text == f"{want[0]}\n\n  {want[1]}\n"
    assert 'filename="notes.txt"' in got.headers["content-disposition"]
    for name in ("..%2F..%2Fetc%2Fpasswd", "x.notes.txt", url.rsplit("/", 1)[1] + "x"):
        assert requests.get(lt(keyed) + "download_file/" + name).status_code == 404
    two = requests.post(lt(keyed) + "translate_file", data=fields,
                        files=[("file", ("one.txt", b"Hallo")), ("file", ("two.md", b"x"))])  # fmt: skip
    assert two.status_code == 200 and two.json()["translatedFileUrl"].endswith(".one.txt")
    bad = requests.post(lt(keyed) + "translate_file", data=fields,
                        files={"file": ("a.pdf", b"%PDF")})  # fmt: skip
    assert bad.status_code == 400 and "file format not supported" in bad.json()["error"]
    no_key = requests.post(lt(keyed) + "translate_file", data={**fields, "api_key": "x"},
                           files={"file": ("a.txt", b"Hallo")})  # fmt: skip
    assert no_key.status_code == 403


def test_detect_and_settings(server):
    status, body, raw = form(lt(server) + "detect", {"q": SENTENCES[0]})
    assert status == 200 and body == [{"confidence": 100.0, "language": "de"}], raw
    for q in (5, [{}], True, {"a": 1}):  # q as /translate takes it
        assert_error(post(lt(server) + "detect", {"q": q}), 400, "q must be a string or a list")
    assert_error(post(lt(server) + "detect", {"q": "\ud800"}), 400, "q: not valid Unicode")
    status, body, raw = get(lt(server) + "frontend/settings")
    assert status == 200 and body["language"]["target"]["code"] == "en", raw
    assert ".txt" in body["supportedFilesFormat"] and body["apiKeys"] is False
    assert json.loads(json.dumps(body)) == body


def test_the_schema_declares_every_path_parameter(server):
    """Each {name} of a path is a declared parameter (schemathesis reports a schema error
    for one that is not)."""
    paths = get(server.url + "/openapi.json")[1]["paths"]
    assert "/libretranslate/download_file/{name}" in paths
    for path, operations in paths.items():
        for method, operation in operations.items():
            declared = {p["name"] for p in operation.get("parameters", []) if p["in"] == "path"}
            assert declared == set(re.findall(r"{(\w+)}", path)), (method, path)


def test_suggest_is_refused_as_libretranslate_refuses_it(server):
    ask = {"q": SENTENCES[0], "s": "A dog runs.", "source": "de", "target": "en"}
    assert_error(post(lt(server) + "suggest", ask), 403, "Suggestions are disabled")


def test_a_bug_and_a_body_over_the_limit_are_answered_to_other_origins(
    server, transformer, monkeypatch
):
    """Browser clients see these answers only with the CORS header the other answers carry."""
    from translator.serve.libretranslate import LibreTranslate
    from translator.serve.limits import Limits

    origin = {"Origin": "https://example.org"}
    big = requests.post(lt(server) + "translate", data=b" " * (Limits().max_body + 1),
                        headers=origin)  # fmt: skip
    assert big.status_code == 413 and big.headers["access-control-allow-origin"] == "*"

    async def broken(self, *args):
        raise RuntimeError("a bug")

    monkeypatch.setattr(LibreTranslate, "plain", broken)
    path, engine = transformer
    with app_client(engine, path, engine.cfg.decode) as client:
        ask = {"q": SENTENCES[0], "source": "de", "target": "en"}
        res = client.post("/libretranslate/translate", json=ask, headers=origin)
    assert res.status_code == 500 and set(res.json()) == {"error"}, res.text
    assert res.headers["access-control-allow-origin"] == "*"


def test_markup_nested_too_deeply_for_the_documents_layer_is_a_400(transformer, monkeypatch):
    import translator.documents

    def too_deep(*args):
        raise RecursionError("maximum recursion depth exceeded")

    monkeypatch.setattr(translator.documents, "translate_bytes", too_deep)
    path, engine = transformer
    with app_client(engine, path, engine.cfg.decode) as client:
        ask = {"q": f"<p>{SENTENCES[0]}</p>", "source": "de", "target": "en", "format": "html"}
        res = client.post("/libretranslate/translate", json=ask)
        assert res.status_code == 400 and "nested too deeply" in res.json()["error"], res.text
        res = client.post("/libretranslate/translate_file", data={"source": "de", "target": "en"},
                          files={"file": ("a.md", b"*Hund*")})  # fmt: skip
        assert res.status_code == 400 and "a.md: the markdown" in res.json()["error"], res.text


def test_a_text_split_past_the_timeout_is_a_503_in_time(transformer, monkeypatch):
    """--timeout holds a request's texts or file whole, their sentence splitting included."""
    import time

    from translator.documents import units
    from translator.serve import libretranslate

    split = libretranslate.line_spans
    monkeypatch.setattr(libretranslate, "line_spans", lambda *a: time.sleep(3) or split(*a))
    spans = units.sentence_spans  # Markdown's splitting, on a worker thread
    monkeypatch.setattr(units, "sentence_spans", lambda *a: time.sleep(3) or spans(*a))
    path, engine = transformer
    with app_client(engine, path, engine.cfg.decode, timeout=1.0) as client:
        start = time.monotonic()
        ask = {"q": SENTENCES[0], "source": "de", "target": "en"}
        res = client.post("/libretranslate/translate", json=ask)
        assert res.status_code == 503 and "busy" in res.json()["error"], res.text
        assert time.monotonic() - start < 2.5
        for name in ("a.txt", "a.md"):  # a file is one request too
            start = time.monotonic()
            res = client.post("/libretranslate/translate_file", data=ask,
                              files={"file": (name, SENTENCES[0].encode())})  # fmt: skip
            assert res.status_code == 503 and "busy" in res.json()["error"], (name, res.text)
            assert time.monotonic() - start < 2.5


def test_translated_files_are_removed_when_the_server_stops(transformer, tmp_path, monkeypatch):
    monkeypatch.setenv("TMPDIR", str(tmp_path))  # where the server's temporary folder goes
    srv = Server(transformer[0], tmp_path / "server.log")
    try:
        res = requests.post(lt(srv) + "translate_file", data={"source": "de", "target": "en"},
                            files={"file": ("a.txt", SENTENCES[0].encode())})  # fmt: skip
        assert res.status_code == 200, res.text
        (folder,) = tmp_path.glob("translator-files-*")
        assert [p.name for p in folder.iterdir()] == [
            res.json()["translatedFileUrl"].rsplit("/", 1)[1]
        ]
        srv.proc.send_signal(signal.SIGTERM)
        assert srv.proc.wait(timeout=60) == 0
        assert not folder.exists()
    finally:
        srv.stop()


def test_languages_of_imported_models_get_two_letter_codes():
    from types import SimpleNamespace

    from translator.config import DataConfig
    from translator.engines.lang_codes import Codes
    from translator.serve.libretranslate_langs import Languages
    from translator.serve.limits import LimitError

    def engine(codes, at="both", src="deu_Latn", tgt="eng_Latn"):
        data = DataConfig(src_lang=src, tgt_lang=tgt)
        return SimpleNamespace(cfg=SimpleNamespace(data=data), language_codes=Codes(codes, at))

    nllb = Languages(engine({"deu_Latn": 5, "eng_Latn": 6, "zho_Hans": 7, "zho_Hant": 8}))
    listing = {lang["code"]: lang for lang in nllb.listing()}
    assert list(listing) == ["de", "en", "zh", "zh-Hant"]
    assert listing["de"] == {"code": "de", "name": "German", "targets": ["en", "zh", "zh-Hant"]}
    assert nllb.find("DE").model == "deu_Latn" and nllb.find("zho_Hant").code == "zh-Hant"
    assert nllb.find("pt-BR") is None and nllb.find("en-US").model == "eng_Latn"
    source, _ = nllb.source("de")
    assert nllb.target(source, "zh-Hant").model == "zho_Hant"
    with pytest.raises(LimitError, match="detects no language"):
        nllb.source("auto")
    opus = Languages(engine({"fra": 1, "deu": 2}, at="source", src="en", tgt="fra"))
    assert opus.listing() == [
        {"code": "en", "name": "English", "targets": ["fr", "de"]},
        {"code": "fr", "name": "French", "targets": []},
        {"code": "de", "name": "German", "targets": []},
    ]
    assert opus.source("auto")[0].code == "en"
    with pytest.raises(LimitError, match="fr is not supported as a source; this model reads en"):
        opus.source("fr")


def test_markdown_html_and_docx_files_keep_their_structure(keyed, transformer):
    import io

    import docx

    fields = {"source": "de", "target": "en", "api_key": KEY}

    def translated(name: str, data: bytes) -> bytes:
        res = requests.post(lt(keyed) + "translate_file", data=fields, files={"file": (name, data)})
        assert res.status_code == 200, res.text
        got = requests.get(res.json()["translatedFileUrl"])
        assert got.status_code == 200
        return got.content

    out = translated("a.md", f"# {SENTENCES[4]}\n\n- {SENTENCES[0]}\n".encode()).decode()
    assert out.startswith("# ") and "\n\n- " in out and SENTENCES[0] not in out, out
    out = translated("a.html", f'<p lang="de"><b>{SENTENCES[1]}</b></p>'.encode()).decode()
    assert out.startswith('<p lang="en"><b>') and out.endswith("</b></p>")
    assert SENTENCES[1] not in out
    document = docx.Document()
    document.add_paragraph(SENTENCES[3])
    document.add_paragraph(SENTENCES[4], style="Heading 1")
    buffer = io.BytesIO()
    document.save(buffer)
    back = docx.Document(io.BytesIO(translated("a.docx", buffer.getvalue())))
    texts = [(p.style.name, p.text) for p in back.paragraphs]
    assert [s for s, _ in texts] == ["Normal", "Heading 1"]
    assert texts[0][1] and texts[0][1] != SENTENCES[3], texts
    broken = requests.post(lt(keyed) + "translate_file", data=fields,
                           files={"file": ("b.docx", b"not a zip")})  # fmt: skip
    assert broken.status_code == 400 and "b.docx" in broken.json()["error"], broken.text
    zipped = requests.post(lt(keyed) + "translate_file", data=fields,
                           files={"file": ("c.md", b"PK\x03\x04zip")})  # fmt: skip
    # the command's option is no answer to a client of the API
    assert zipped.json()["error"] == "c.md: a zip file (a Word document?), not markdown text", (
        zipped.text
    )
    assert "Traceback" not in keyed.log()


def test_a_docx_that_unzips_to_far_more_than_it_weighs_is_refused_unread(keyed):
    import io
    import zipfile

    import docx

    from translator.serve.libretranslate_io import UNZIPPED
    from translator.serve.limits import Limits

    document = docx.Document()
    document.add_paragraph(SENTENCES[0])
    plain, bomb = io.BytesIO(), io.BytesIO()
    document.save(plain)
    empty = b"<w:p/>" * (UNZIPPED * Limits().max_body // 6 + 1)  # paragraphs, packed ~1000:1
    with zipfile.ZipFile(plain) as src, zipfile.ZipFile(bomb, "w", zipfile.ZIP_DEFLATED) as out:
        for info in src.infolist():
            data = src.read(info.filename)
            if info.filename == "word/document.xml":
                data = data.replace(b"<w:body>", b"<w:body>" + empty)
            out.writestr(info.filename, data)
    assert len(bomb.getvalue()) < Limits().max_body
    res = requests.post(lt(keyed) + "translate_file",
                        data={"source": "de", "target": "en", "api_key": KEY},
                        files={"file": ("b.docx", bomb.getvalue())})  # fmt: skip
    assert res.status_code == 400 and "b.docx" in res.json()["error"], res.text
    assert "once unzipped" in res.json()["error"], res.text


def test_an_empty_api_key_is_refused_before_the_model_loads(here, tmp_path):
    (tmp_path / "unread.pt").touch()  # not a model: it is never loaded
    code, out, err = here("serve", "--checkpoint", str(tmp_path / "unread.pt"), "--api-key", " ")
    assert code == 2 and "--api-key is empty" in err and len(err.strip().splitlines()) == 1, err
