"""The server's "confidence": each text's sentence confidence, one confidence and a doubtful
flag per word of its translation, whether the model is calibrated, in the batch and the
continuous mode, and a 400 from an engine that keeps no token log-probabilities."""

import dataclasses
import shutil

import pytest
from checkpoints import needs_ct2
from commandline import cli_captured
from serving import app_client
from util import write_varied_pairs

from translator.engines.load import load_engine

LINES = ["Ein Hund läuft.", "", "Die alte Frau liest ein Buch.", "Zwei Katzen spielen."]


@pytest.fixture(scope="module")
def calibrated(transformer, tmp_path_factory):
    """A copy of the session's trained Transformer, calibrated on fifteen sentences."""
    root = tmp_path_factory.mktemp("serve-confidence")
    path = root / "model.pt"
    shutil.copy(transformer[0], path)
    src, ref = root / "dev.de", root / "dev.en"
    write_varied_pairs(src, ref)
    done = cli_captured("calibrate", "--checkpoint", str(path), "--src", str(src), "--ref",
                        str(ref))  # fmt: skip
    assert done.returncode == 0, done.stderr
    return path


def assert_confidence(answer: dict, threshold: float) -> None:
    """One confidence in [0, 1] per text, one word confidence and doubtful flag per word."""
    texts = answer["translations"]
    assert len(answer["confidence"]) == len(answer["word_confidence"]) == len(texts)
    assert all(0.0 <= c <= 1.0 for c in answer["confidence"])
    for text, per_word, doubtful in zip(texts, answer["word_confidence"], answer["doubtful"]):
        assert len(per_word) == len(doubtful) == len(text.split()), (text, per_word)
        assert all(0.0 <= w <= 1.0 for w in per_word)
        # the flags are the rounded figures' own, within their rounding
        assert all(
            d == (w < threshold) for w, d in zip(per_word, doubtful) if abs(w - threshold) > 1e-4
        )
    assert answer["confidence_threshold"] == pytest.approx(threshold, abs=1e-4)


@pytest.mark.parametrize("batching", ["batch", "continuous"])
def test_translate_answers_confidence_per_text_and_word(three_steps, calibrated, batching):
    for path, is_calibrated in [(three_steps, False), (calibrated, True)]:
        engine = load_engine(path, "cpu")
        want = engine.translate(LINES, engine.request(confidence=True))
        threshold = engine.calibration.threshold if is_calibrated else 0.5
        with app_client(engine, path, engine.cfg.decode, batching) as client:
            answer = client.post("/translate", json={"texts": LINES, "confidence": True}).json()
            assert answer["translations"] == [h[0].text for h in want]
            assert answer["confidence"] == [round(h[0].confidence, 4) for h in want]
            assert answer["confidence_calibrated"] is is_calibrated
            assert_confidence(answer, threshold)
            assert answer["confidence"][1] == 0.0 and answer["word_confidence"][1] == []
            plain = client.post("/translate", json={"texts": LINES}).json()
            assert plain["translations"] == answer["translations"]
            assert not {"confidence", "word_confidence", "doubtful"} & set(plain)
            body = {"text": LINES[2], "confidence": True, "nbest": 2, "beam": 2}
            nbest = client.post("/translate", json=body).json()
            assert_confidence(nbest, threshold)
            hyps = nbest["nbest"][0]
            assert len(hyps) == 2 and all(0.0 <= h["confidence"] <= 1.0 for h in hyps)
            assert hyps[0]["confidence"] == nbest["confidence"][0]


def test_confidence_and_alignments_together(three_steps):
    engine = load_engine(three_steps, "cpu")
    with app_client(engine, three_steps, engine.cfg.decode) as client:
        body = {"texts": LINES, "confidence": True, "alignments": True}
        answer = client.post("/translate", json=body).json()
        assert len(answer["alignments"]) == len(answer["confidence"]) == len(LINES)
        assert_confidence(answer, 0.5)


class NoConfidence:
    """An engine as one that keeps no token log-probabilities declares itself."""

    def __init__(self, engine):
        self.engine = engine
        self.capabilities = dataclasses.replace(engine.capabilities, confidence=False)

    def __getattr__(self, name: str):
        return getattr(self.engine, name)


def test_an_engine_without_log_probabilities_answers_400(three_steps):
    engine = NoConfidence(load_engine(three_steps, "cpu"))
    with app_client(engine, three_steps, engine.cfg.decode) as client:
        refused = client.post("/translate", json={"text": LINES[0], "confidence": True})
        assert refused.status_code == 400 and set(refused.json()) == {"error"}
        assert refused.json()["error"].startswith("confidence:")
        assert client.post("/translate", json={"text": LINES[0]}).status_code == 200


@needs_ct2
def test_an_export_answers_confidence_or_refuses_it(three_steps, tmp_path):
    from translator.engines.export import export_checkpoint

    export_checkpoint(three_steps, "ctranslate2", "float32", tmp_path / "ct2")
    engine = load_engine(tmp_path / "ct2", "cpu")
    with app_client(engine, tmp_path / "ct2", engine.cfg.decode) as client:
        answer = client.post("/translate", json={"texts": LINES, "confidence": True})
    if engine.capabilities.confidence:
        assert answer.status_code == 200, answer.text
        assert_confidence(answer.json(), 0.5)
    else:
        assert answer.status_code == 400 and answer.json()["error"].startswith("confidence:")
