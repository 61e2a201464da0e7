"""The served page in a headless Chromium (the translation, the n-best list, the heatmap, a
prefix typed and completed) and target prefixes in /translate requests, batched and
continuous."""

import html
import subprocess
import urllib.parse

import pytest
from browser import Browser, browser_env, chromium
from serving import SENTENCES, Server, assert_error, get, post
from util import guided_translate


def check_prefixes(url: str, translator, long: tuple) -> None:
    """Prefixes per request and per text give what the translator gives them; a bad one is
    a one-line 4xx; `long`: the status and words a 600-character prefix gets."""
    texts, prefixes = SENTENCES[:4], ["A", "", "Two men", "The"]
    dc = translator.cfg.decode.replace(beam=2)
    want = guided_translate(translator, texts, prefixes, decode=dc)
    status, body, raw = post(url + "/translate", {"texts": texts, "beam": 2, "prefixes": prefixes})
    assert status == 200 and body["translations"] == [r[0].text for r in want], raw
    assert all(t.startswith(p) for t, p in zip(body["translations"], prefixes))
    status, body, raw = post(url + "/translate", {"text": texts[1], "prefix": "A dog"})
    assert status == 200 and body["translations"][0].startswith("A dog"), raw
    assert_error(post(url + "/translate", {"texts": texts, "prefixes": ["A"]}), 422, "1 prefixes")
    both = {"text": texts[0], "prefix": "A", "prefixes": ["A"]}
    assert_error(post(url + "/translate", both), 422, "not both")
    # each character three byte-fallback pieces: 1,800 subwords
    too_long = {"text": texts[0], "prefix": "\u6f22" * 600}
    assert_error(post(url + "/translate", too_long), *long)


def check_constraints(url: str, translator) -> None:
    """Required phrases and terms per request: every translation holds them, as the
    translator's own search gives; mistakes are one-line 4xxs."""
    texts = SENTENCES[:4]
    dc = translator.cfg.decode.replace(beam=3)
    musts = [["red ball", "Katzen" in t and "kittens" or ""] for t in texts]
    want = guided_translate(translator, texts, None, [[m for m in ms if m] for ms in musts], dc)
    ask = {"texts": texts, "beam": 3, "constraints": ["red ball"], "terms": {"Katzen": "kittens"}}
    status, body, raw = post(url + "/translate", ask)
    assert status == 200 and body["translations"] == [r[0].text for r in want], raw
    for text, out in zip(texts, body["translations"]):
        assert "red ball" in out and ("kittens" in out) == ("Katzen" in text)
    bad = {"text": texts[0], "beam": 2, "constraints": ["a", "b"]}
    assert_error(post(url + "/translate", bad), 422, "2 required phrases", 'set "beam" to 3')
    assert_error(post(url + "/translate", {"text": texts[0], "constraints": [" "]}), 400, "empty")


def test_prefixes_and_constraints_in_requests(server, transformer):
    check_prefixes(server.url, transformer[1], (413, "over this server's limit"))
    check_constraints(server.url, transformer[1])


def test_prefixes_join_a_continuous_batch_and_constraints_are_decoded_apart(transformer, tmp_path):
    path, translator = transformer
    srv = Server(path, tmp_path / "log", "--batching", "continuous", "--batch-size", "16")
    try:
        check_prefixes(srv.url, translator, (400, "output limit of 1023"))
        check_constraints(srv.url, translator)
        assert "Traceback" not in srv.log()
    finally:
        srv.stop()


def rendered(url: str, tmp_path, **query) -> str:
    """The page's DOM once headless Chromium has run its script (10 s of virtual time)."""
    browser = chromium()
    if browser is None:
        pytest.skip("chromium is not installed (apt-get install chromium): page not rendered")
    flags = ["--headless", "--no-sandbox", "--disable-gpu", "--virtual-time-budget=10000"]
    page = f"{url}/?{urllib.parse.urlencode(query)}"
    with browser_env() as env:
        result = subprocess.run(
            [browser, *flags, f"--user-data-dir={tmp_path}", "--dump-dom", page],
            capture_output=True,
            text=True,
            timeout=60,
            env=env,
        )
    return result.stdout


def test_the_page_completes_a_prefix(server, tmp_path):
    dom = rendered(server.url, tmp_path, text=SENTENCES[1], beam=2, prefix="Two old")
    _, body, _ = post(
        server.url + "/translate", {"text": SENTENCES[1], "beam": 2, "prefix": "Two old"}
    )
    best = body["translations"][0]
    assert best.startswith("Two old")
    assert f'<div id="translation">{best}</div>' in dom, dom[-2000:]
    heat = dom[dom.index('id="heatmap"') :]  # the heatmap of the prefixed translation
    ask = {"text": SENTENCES[1], "beam": 2, "prefix": "Two old"}
    _, att, raw = post(server.url + "/attention", ask)
    assert att["translation"] == best, raw
    assert heat.count("<tr") == 1 + len(att["target"])
    assert all(f"<th>{html.escape(piece, quote=False)}</th>" in heat for piece in att["target"])


def test_the_page_requires_the_words_asked_for(server, tmp_path):
    dom = rendered(server.url, tmp_path, text=SENTENCES[1], beam=2, must="red ball, dog")
    ask = {"text": SENTENCES[1], "beam": 3, "constraints": ["red ball", "dog"]}
    _, body, raw = post(server.url + "/translate", ask)  # the page raises the beam to 3
    best = body["translations"][0]
    assert "red ball" in best and "dog" in best, raw
    assert f'<div id="translation">{best}</div>' in dom, dom[-2000:]


def test_the_page_in_headless_chromium(server, tmp_path):
    dom = rendered(server.url, tmp_path, text=SENTENCES[1], beam=2)
    _, body, _ = post(server.url + "/translate", {"text": SENTENCES[1], "beam": 2, "nbest": 2})
    assert f'<div id="translation">{body["translations"][0]}</div>' in dom, dom[-2000:]
    assert dom.count("<li>") == 2 and 'class="score"' in dom  # the n-best list
    heat = dom[dom.index('id="heatmap"') :]
    assert heat.count("<td ") >= 2 and "rgba(var(--accent)" in heat  # the heatmap's cells
    assert "▁Frau" in heat


def test_typing_a_prefix_completes_the_translation_once_the_typing_pauses(server, tmp_path):
    if chromium() is None:
        pytest.skip("chromium is not installed (apt-get install chromium): page not typed in")
    browser = Browser(str(tmp_path))
    try:
        query = urllib.parse.urlencode({"text": SENTENCES[1], "beam": 2})
        browser.open(f"{server.url}/?{query}")
        first = browser.wait_for("document.getElementById('status').textContent.includes('ms')")
        before = get(server.url + "/health")[1]["sentences"]
        typed = "Two old"  # a key at a time, faster than the pause that asks for a completion
        browser.run(
            "(() => { const box = document.getElementById('prefix'); box.focus();"
            f" for (const key of {typed!r}) {{ box.value += key;"
            " box.dispatchEvent(new Event('input', { bubbles: true })); } })()"
        )
        shown = browser.wait_for(
            "(() => { const t = document.getElementById('translation').textContent;"
            f" return t.startsWith({typed!r}) && t; }})()"
        )
        _, body, _ = post(
            server.url + "/translate", {"text": SENTENCES[1], "beam": 2, "prefix": typed}
        )
        assert shown == body["translations"][0]
        after = get(server.url + "/health")[1]["sentences"]
        assert after - before == 2  # one completion for seven keys, and the check just above
        assert first and "error" not in browser.run("document.getElementById('status').className")
    finally:
        browser.close()


def test_the_page_names_a_bad_beam_and_asks_a_failed_request_once(server, tmp_path):
    """A link's beam over the server's --max-beam (4 here) is named, not replaced; a
    request the server refuses is shown once, without the earlier text's results, and is
    not sent again (only a model that lacks alignments or confidence is asked again)."""
    if chromium() is None:
        pytest.skip("chromium is not installed (apt-get install chromium): page not used")
    browser = Browser(str(tmp_path))
    status = "document.getElementById('status')"
    error = f"{status}.className === 'error' && {status}.textContent"
    try:
        browser.open(f"{server.url}/?{urllib.parse.urlencode({'text': SENTENCES[1], 'beam': 9})}")
        assert browser.wait_for(error) == "beam 9: give a whole number from 1 to 4"
        assert browser.run("document.getElementById('beam').options.length") == 4
        assert browser.run("document.getElementById('translation').textContent") == ""
        browser.run("document.getElementById('beam').value = '4';"
                    " document.getElementById('form').requestSubmit()")  # fmt: skip
        browser.wait_for(f"{status}.textContent.startsWith('beam 4, ')")
        assert browser.run("document.getElementById('nbest').children.length") == 4
        browser.run(
            "(() => { window.asked = 0; const fetched = window.fetch;"
            " window.fetch = (...a) => { window.asked += String(a[0]).endsWith('/translate');"
            " return fetched(...a); };"
            " document.getElementById('text').value = 'x'.repeat(300);"
            " document.getElementById('form').requestSubmit(); })()"
        )
        assert browser.wait_for(error) == "text 0 has 300 characters; the limit is 200"
        assert browser.run("window.asked") == 1
        assert browser.run("document.getElementById('translation').textContent") == ""
        assert browser.run("document.getElementById('nbest').children.length") == 0
        for note in ("alignment-note", "attention-note"):  # (no hint over empty sections)
            assert browser.run(f"document.getElementById('{note}').textContent") == ""
        browser.run("document.getElementById('text').value = '   ';"
                    " document.getElementById('form').requestSubmit()")  # fmt: skip
        assert browser.wait_for(error) == "nothing to translate: the text is empty"
        assert browser.run("window.asked") == 1
    finally:
        browser.close()
