"""The page's word alignments in headless Chromium: hovering a word of the translation
marks the source words aligned to it, and the reverse; against a stub server whose answer
is known, and against the real server's /translate."""

import urllib.parse

import pytest
from browser import Browser, chromium
from serving import SENTENCES, PageStub, post

HOVER = """(() => {{
  const node = document.querySelector('#align-{side} .word[data-k="{k}"]');
  node.dispatchEvent(new MouseEvent('{event}', {{ bubbles: true }}));
  const marked = (cls) => [...document.querySelectorAll('.word.' + cls)]
    .map((n) => n.dataset.side + n.dataset.k);
  return {{ active: marked('active'), aligned: marked('aligned') }};
}})()"""


def hover(browser, side: str, k: int, event: str = "mouseover") -> dict:
    return browser.run(HOVER.format(side=side, k=k, event=event))


def words_shown(browser) -> list:
    return browser.wait_for(
        "(() => { const w = (id) => [...document.querySelectorAll(`#${id} .word`)]"
        ".map((n) => n.textContent); const s = w('align-source'), t = w('align-target');"
        " return s.length && t.length && [s, t]; })()"
    )


def opened(tmp_path, url: str, text: str) -> Browser:
    if chromium() is None:
        pytest.skip("chromium is not installed (apt-get install chromium): page not hovered")
    browser = Browser(str(tmp_path))
    browser.open(f"{url}/?{urllib.parse.urlencode({'text': text, 'beam': 2})}")
    return browser


class Stub:
    """The page served by a tiny app whose /translate answers one known alignment when
    asked for alignments and a 422 otherwise, as a server that has none would."""

    TRANSLATION = "the old woman reads"
    PAIRS = [[0, 0], [1, 1], [1, 2], [3, 3]]  # "die alte Frau liest": alte -> old woman

    def __init__(self):
        async def translate(body: dict):
            answer = {"beam": 2, "translations": [self.TRANSLATION], "scores": [-1.0]}
            return {**answer, "alignments": [self.PAIRS]} if body.get("alignments") else answer

        self.server = PageStub(translate)
        self.url = self.server.url

    def stop(self) -> None:
        self.server.stop()


def test_hovering_a_word_marks_its_aligned_words(tmp_path):
    stub = Stub()
    try:
        browser = opened(tmp_path, stub.url, "die alte Frau liest")
        try:
            source, target = words_shown(browser)
            assert source == ["die", "alte", "Frau", "liest"]
            assert target == stub.TRANSLATION.split()
            seen = hover(browser, "target", 2)  # "woman" <- "alte"
            assert seen == {"active": ["target2"], "aligned": ["source1"]}
            seen = hover(browser, "source", 1)  # "alte" -> "old", "woman"
            assert seen == {"active": ["source1"], "aligned": ["target1", "target2"]}
            assert hover(browser, "source", 2) == {"active": ["source2"], "aligned": []}
            assert hover(browser, "source", 2, "mouseout") == {"active": [], "aligned": []}
        finally:
            browser.close()
    finally:
        stub.stop()


def test_the_real_servers_alignments_on_the_page(server, tmp_path):
    ask = {"text": SENTENCES[1], "beam": 2, "nbest": 2, "alignments": True}
    status, body, raw = post(server.url + "/translate", ask)
    if status != 200:
        pytest.skip(f"/translate gives no alignments here: {raw[:200]!r}")
    pairs, best = body["alignments"][0], body["translations"][0]
    browser = opened(tmp_path, server.url, SENTENCES[1])
    try:
        source, target = words_shown(browser)
        assert source == SENTENCES[1].split() and target == best.split()
        for j in range(len(target)):
            seen = hover(browser, "target", j)
            assert seen["active"] == [f"target{j}"]
            assert sorted(seen["aligned"]) == sorted({f"source{i}" for i, jj in pairs if jj == j})
        for i in range(len(source)):
            seen = hover(browser, "source", i)
            assert seen["active"] == [f"source{i}"]
            assert sorted(seen["aligned"]) == sorted({f"target{j}" for ii, j in pairs if ii == i})
    finally:
        browser.close()
