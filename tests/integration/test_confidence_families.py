"""Confidence for every family and for ensembles: `calibrate` fits and stores a calibration
for the LSTM, Bahdanau and Luong models as for the Transformer, and `translate
--confidence` / `--min-confidence` read it; an ensemble reports its raw confidence until
`calibrate --ensemble` fits one for exactly its members."""

import math
import shutil

import pytest
from commandline import run_cli
from util import tiny_config

from translator.config import config_from_dict
from translator.engines.load import load_engine
from translator.models.checkpoint import Checkpoint
from translator.train.trainer import Trainer

SMALL = {"embed_dim": 16, "hidden_size": 16}
FAMILIES = {
    "lstm": {"type": "lstm", **SMALL},
    "bahdanau": {"type": "bahdanau", **SMALL},
    "luong": {"type": "luong", **SMALL},
}
LINES = ["Ein Hund läuft.", "Zwei Katzen schlafen auf dem Sofa.", "", "Ein Mann fährt."]


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """A checkpoint of each recurrent family, trained 3 steps on one tokenizer's corpus."""
    root = tmp_path_factory.mktemp("confidence-families")
    out = {}
    for name, model in FAMILIES.items():
        cfg = tiny_config(run_dir=str(root / name), train={"max_steps": 3}, model=model)
        for key in ("d_model", "heads", "ff_dim"):
            cfg["model"].pop(key)
        Trainer(config_from_dict(cfg)).run()
        out[name] = root / name / "last.pt"
    return out


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_calibrate_and_translate_with_confidence(runs, family, tmp_path, capsys):
    path = tmp_path / "model.pt"
    shutil.copy(runs[family], path)
    code, out, err = run_cli(capsys, "calibrate", "--checkpoint", str(path))
    assert code == 0 and "calibrated" in out, err
    assert Checkpoint.load(path).calibration["decode"]["beam"] == 2
    # an ensemble of one decodes as its model, and takes its calibration
    alone = load_engine([path], "cpu", ensemble=True)
    assert alone.calibration.to_dict() == Checkpoint.load(path).calibration
    base = ["translate", "--checkpoint", str(path), "--device", "cpu"]
    code, out, err = run_cli(capsys, *base, "--min-confidence", "0.5", *LINES)
    assert code == 0, err
    rows = [row.split("\t") for row in out.splitlines()]
    assert len(rows) == len(LINES)
    for _, conf, mark in rows:
        assert 0.0 <= float(conf) <= 1.0 and mark == ("doubtful" if float(conf) < 0.5 else "ok")
    engine = load_engine(path, "cpu")
    found = engine.translate(LINES, engine.request(confidence=True))
    assert [f"{t[0].confidence:.4f}" for t in found] == [r[1] for r in rows]
    for (text, _, _), hyps in zip(rows, found):
        assert hyps[0].text == text and len(hyps[0].word_confidence) == len(text.split())
    # n-best: each hypothesis its own confidence
    code, out, err = run_cli(capsys, *base, "--confidence", "--nbest", "2", LINES[0])
    assert code == 0 and len(out.splitlines()) == 2, err
    assert all(0.0 <= float(r.split("\t")[3]) <= 1.0 for r in out.splitlines())


def test_an_ensemble_reports_raw_confidence_until_calibrated_as_one(runs, tmp_path, capsys):
    lstm, luong = tmp_path / "lstm.pt", tmp_path / "luong.pt"
    shutil.copy(runs["lstm"], lstm)
    shutil.copy(runs["luong"], luong)
    both = ["--checkpoint", str(lstm), "--checkpoint", str(luong), "--ensemble"]
    code, out, err = run_cli(capsys, "translate", *both, "--device", "cpu", "--confidence",
                             *LINES)  # fmt: skip
    assert code == 0, err
    engine = load_engine([lstm, luong], "cpu", ensemble=True)
    assert engine.calibration is None  # each member's calibration is its own model's
    found = engine.translate(LINES, engine.request(confidence=True))
    rows = [row.split("\t") for row in out.splitlines()]
    for (text, conf), hyps in zip(rows, found):
        best = hyps[0]
        assert text == best.text and float(conf) == pytest.approx(best.confidence, abs=1e-4)
        if text:  # uncalibrated: exp(mean token log-probability)
            mean = sum(best.logprobs) / len(best.logprobs)
            assert best.confidence == pytest.approx(math.exp(mean))
    code, _, err = run_cli(capsys, "translate", *both, "--min-confidence", "0.5", LINES[0])
    last = err.strip().splitlines()[-1]
    assert code == 2 and "--ensemble" in last and "calibrate" in last, err

    code, out, err = run_cli(capsys, "calibrate", *both, "--device", "cpu")
    assert code == 0 and "the ensemble of" in out, err
    saved = Checkpoint.load(lstm)
    assert saved.calibration is None and len(saved.ensemble_calibrations) == 1
    assert Checkpoint.load(luong).ensemble_calibrations is None
    for order in ([lstm, luong], [luong, lstm]):  # the members in either order
        engine = load_engine(order, "cpu", ensemble=True)
        assert engine.calibration is not None
        assert engine.calibration.to_dict() == next(iter(saved.ensemble_calibrations.values()))
    code, out, err = run_cli(capsys, "translate", *both, "--device", "cpu", "--min-confidence",
                             "0.5", *LINES)  # fmt: skip
    assert code == 0, err
    found = engine.translate(LINES, engine.request(confidence=True))
    for row, hyps in zip(out.splitlines(), found):
        text, conf, mark = row.split("\t")
        assert text == hyps[0].text and float(conf) == pytest.approx(hyps[0].confidence, abs=1e-4)
        assert mark == ("doubtful" if float(conf) < 0.5 else "ok")
    # other members, or the same file with other weights, have no calibration of it
    other = load_engine([lstm, runs["bahdanau"]], "cpu", ensemble=True)
    assert other.calibration is None
    shutil.copy(runs["bahdanau"], luong)
    assert load_engine([lstm, luong], "cpu", ensemble=True).calibration is None
    code, out, err = run_cli(capsys, "info", str(lstm))
    assert code == 0 and "ensembles it leads: calibrated for 1 set" in out, err
