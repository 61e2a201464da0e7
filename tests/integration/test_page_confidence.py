"""The page's confidence in headless Chromium: the sentence's figure beside the translation
(labelled uncalibrated where so, its threshold in the title text) and the doubtful words
underlined, against a stub server whose answer is known and against the real server."""

import urllib.parse

import pytest
from browser import Browser, chromium
from serving import SENTENCES, PageStub, post

SHOWN = """(() => {
  const box = document.getElementById('confidence');
  if (!box.textContent) return null;
  const marks = CSS.highlights.get('doubtful');
  const words = [...document.querySelectorAll('#align-target .word.doubtful')];
  return {
    text: box.textContent, title: box.title,
    highlighted: marks ? [...marks].map((r) => r.toString()) : [],
    marked: words.map((n) => n.textContent),
    underlined: words.every((n) => getComputedStyle(n).textDecorationLine === 'underline'),
    translation: document.getElementById('translation').innerHTML,
    aligned: document.querySelectorAll('#align-target .word').length,
  };
})()"""


def shown(tmp_path, url: str, text: str) -> dict:
    """What the page shows of its translation's confidence, once it shows any."""
    if chromium() is None:
        pytest.skip("chromium is not installed (apt-get install chromium): page not checked")
    browser = Browser(str(tmp_path))
    try:
        browser.open(f"{url}/?{urllib.parse.urlencode({'text': text, 'beam': 2})}")
        return browser.wait_for(SHOWN)
    finally:
        browser.close()


class Stub:
    """The page served by a tiny app whose /translate answers a known translation with
    alignments and confidence when asked, `calibrated` or not."""

    TRANSLATION = "the old woman reads"
    DOUBTFUL = [False, True, False, True]

    def __init__(self, calibrated: bool, refused: bool = False):
        from fastapi.responses import JSONResponse

        sure = {
            "confidence": [0.4242],
            "word_confidence": [[0.9, 0.2, 0.8, 0.1]],
            "doubtful": [self.DOUBTFUL],
            "confidence_calibrated": calibrated,
            "confidence_threshold": 0.35 if calibrated else 0.5,
        }

        async def translate(body: dict):
            answer = {"beam": 2, "translations": [self.TRANSLATION], "scores": [-1.0]}
            if body.get("alignments"):
                answer["alignments"] = [[[0, 0], [1, 1], [2, 2], [3, 3]]]
            if body.get("confidence") and refused:  # as a model without log-probabilities
                return JSONResponse({"error": "confidence: the served model keeps none"}, 400)
            return answer | sure if body.get("confidence") else answer

        self.server = PageStub(translate)
        self.url = self.server.url

    def stop(self) -> None:
        self.server.stop()


@pytest.mark.parametrize("calibrated", [False, True])
def test_the_page_underlines_doubtful_words_and_shows_the_confidence(tmp_path, calibrated):
    stub = Stub(calibrated)
    try:
        seen = shown(tmp_path, stub.url, "die alte Frau liest")
    finally:
        stub.stop()
    doubtful = [w for w, d in zip(stub.TRANSLATION.split(), stub.DOUBTFUL) if d]
    assert seen["highlighted"] == seen["marked"] == doubtful == ["old", "reads"]
    assert seen["underlined"]
    assert seen["translation"] == stub.TRANSLATION  # the text itself is left as it is
    assert seen["text"].startswith("confidence 0.42")
    assert ("uncalibrated" in seen["text"]) is not calibrated
    assert "2 doubtful words underlined" in seen["text"]
    if calibrated:
        assert "calibration's threshold of 0.35" in seen["title"]
    else:
        assert "no calibration" in seen["title"] and "fixed 0.5" in seen["title"]


def test_a_server_that_refuses_confidence_still_translates_and_aligns(tmp_path):
    stub = Stub(calibrated=False, refused=True)
    try:
        seen = shown(tmp_path, stub.url, "die alte Frau liest")
    finally:
        stub.stop()
    assert seen["text"] == "No confidence: confidence: the served model keeps none"
    assert seen["translation"] == stub.TRANSLATION and seen["marked"] == []
    assert seen["highlighted"] == [] and seen["aligned"] == 4


def test_the_real_servers_confidence_on_the_page(server, tmp_path):
    ask = {"text": SENTENCES[1], "beam": 2, "nbest": 2, "confidence": True}
    status, body, raw = post(server.url + "/translate", ask)
    assert status == 200, raw
    seen = shown(tmp_path, server.url, SENTENCES[1])
    assert seen["text"].startswith(f"confidence {body['confidence'][0]:.2f} (uncalibrated)")
    words = body["translations"][0].split()
    doubtful = [w for w, d in zip(words, body["doubtful"][0]) if d]
    assert seen["highlighted"] == doubtful
    assert seen["marked"] == doubtful  # the alignment's words of the translation too
