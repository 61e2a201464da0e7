"""translator calibrate: the confidence fitted on a checkpoint's dev split or on files,
stored in the checkpoint, and read back into sentence and word confidences."""

import math
import shutil

import pytest
from commandline import run_cli
from util import write_varied_pairs

from translator.decode.calibrate import confidence_request, confidences
from translator.decode.confidence import Calibration
from translator.engines.load import load_engine
from translator.models.checkpoint import Checkpoint


@pytest.fixture(scope="module")
def calibrated(transformer, tmp_path_factory):
    path = tmp_path_factory.mktemp("calibrate") / "model.pt"
    shutil.copy(transformer[0], path)
    return path


def test_calibrate_fits_on_dev_and_stores_it_in_the_checkpoint(calibrated, capsys):
    import json

    before = Checkpoint.load(calibrated)
    assert before.calibration is None
    code, out, err = run_cli(capsys, "calibrate", "--checkpoint", str(calibrated), "--json")
    assert code == 0, err
    report = json.loads(out)
    assert report["sentences"] >= 10 and -1 <= report["spearman"] <= 1
    saved = Checkpoint.load(calibrated)
    assert saved.calibration["decode"]["beam"] == before.config["decode"]["beam"]
    assert saved.calibration["decode"]["nbest"] == before.config["decode"]["beam"]
    # the weights are untouched
    assert all((saved.model[k] == v).all() for k, v in before.model.items())


def test_calibrated_confidence_is_a_predicted_chrf_per_line_and_per_word(calibrated, capsys):
    run_cli(capsys, "calibrate", "--checkpoint", str(calibrated))
    cal = Calibration.from_dict(Checkpoint.load(calibrated).calibration)
    engine = load_engine(calibrated, "cpu")
    lines = ["Ein Hund läuft.", "Zwei Katzen schlafen auf dem roten Sofa.", ""]
    nbests = engine.translate(lines, confidence_request(engine.request()))
    found = confidences(engine, lines, nbests, cal)
    for nbest, conf in zip(nbests, found):
        assert conf.calibrated and 0.0 <= conf.sentence <= 1.0
        assert len(conf.words) == len(nbest[0].text.split())
        assert len(conf.doubtful) == len(conf.words)
        assert all(0.0 < w <= 1.0 for w in conf.words)
    assert found[2].sentence == 0.0  # nothing to be sure of
    raw = confidences(engine, lines[:1], nbests[:1], None)[0]
    mean = sum(nbests[0][0].logprobs) / len(nbests[0][0].logprobs)
    assert not raw.calibrated and raw.sentence == pytest.approx(math.exp(mean))


def test_calibrate_on_files_and_its_mistakes(calibrated, tmp_path, capsys):
    src, ref = tmp_path / "dev.de", tmp_path / "dev.en"
    src.write_text("Ein Hund läuft.\n" * 12, encoding="utf-8")
    ref.write_text("A dog runs.\n" * 12, encoding="utf-8")
    files = ["--src", str(src), "--ref", str(ref)]
    code, out, err = run_cli(capsys, "calibrate", "--checkpoint", str(calibrated), *files)
    assert code == 2 and "all 12 translations score the same" in err, err  # nothing to fit
    n = write_varied_pairs(src, ref)
    code, out, err = run_cli(capsys, "calibrate", "--checkpoint", str(calibrated), *files)
    assert code == 0 and "calibrated" in out and f"{n} sentences" in out, err
    for args, needle in [
        (["--src", str(src)], "--src and --ref go together"),
        (["--src", str(src), "--ref", str(tmp_path)], ""),
    ]:
        code, _, err = run_cli(capsys, "calibrate", "--checkpoint", str(calibrated), *args)
        assert code == 2 and needle in err and len(err.strip().splitlines()) == 1, err
    few = tmp_path / "few.de"
    few.write_text("Ein Hund.\n", encoding="utf-8")
    code, _, err = run_cli(capsys, "calibrate", "--checkpoint", str(calibrated), "--src",
                           str(few), "--ref", str(few))  # fmt: skip
    assert code == 2 and "10 or more" in err, err
    code, _, err = run_cli(capsys, "calibrate", "--checkpoint", str(tmp_path))
    assert code == 2 and "checkpoint file" in err, err


def test_calibrate_waits_for_a_training_run_in_its_folder(calibrated, capsys):
    """A run holds its folder locked (train/run_dir.py) and may replace best.pt at any
    validation: calibrating there meanwhile is refused, and the file stays as it was."""
    import os

    from translator.fileio import locked

    before = calibrated.read_bytes()
    fd = locked(calibrated.parent)  # as a training run holds it
    try:
        code, _, err = run_cli(capsys, "calibrate", "--checkpoint", str(calibrated))
    finally:
        os.close(fd)
    assert code == 2 and "in use by a training run" in err and len(err.splitlines()) == 1, err
    assert calibrated.read_bytes() == before


def test_translate_puts_the_confidence_column_before_the_alignments(calibrated, tmp_path, capsys):
    run_cli(capsys, "calibrate", "--checkpoint", str(calibrated))
    engine = load_engine(calibrated, "cpu")
    lines = ["Ein Hund läuft.", "Zwei Katzen schlafen."]
    args = ["translate", "--checkpoint", str(calibrated), "--device", "cpu", *lines]
    code, plain, err = run_cli(capsys, *args)
    assert code == 0, err
    code, out, err = run_cli(capsys, *args, "--confidence", "--alignments")
    assert code == 0, err
    nbests = engine.translate(lines, confidence_request(engine.request()))
    want = confidences(engine, lines, nbests, engine.calibration)
    rows = [line.split("\t") for line in out.splitlines()]
    assert [r[0] for r in rows] == plain.splitlines()  # the translations are unchanged
    for row, conf in zip(rows, want):
        assert len(row) == 3 and float(row[1]) == pytest.approx(conf.sentence, abs=1e-4)
        assert all("-" in pair for pair in row[2].split())
    src, dst = tmp_path / "in.de", tmp_path / "out.en"
    src.write_text("\n".join(lines) + "\n", encoding="utf-8")
    code, _, err = run_cli(capsys, *args[:5], "--input", str(src), "--output", str(dst),
                           "--confidence")  # fmt: skip
    assert code == 0, err
    assert [r.split("\t")[1] for r in dst.read_text().splitlines()] == [r[1] for r in rows]


def test_confidence_under_another_search_than_calibrated_is_warned_of_once(
    calibrated, caplog, capsys
):
    """A calibration is fitted under its beam: another beam, or sampling, feeds it other
    features, which the log says once per engine and search; the calibrated beam says
    nothing."""
    from translator.decode.request import DecodeRequest
    from translator.decode.sampling import Sampling

    run_cli(capsys, "calibrate", "--checkpoint", str(calibrated))
    engine = load_engine(calibrated, "cpu")
    beam = engine.calibration.decode["beam"]
    dc = engine.cfg.decode
    asks = [
        DecodeRequest(dc.replace(beam=beam), confidence=True),
        DecodeRequest(dc.replace(beam=beam + 1), confidence=True),
        DecodeRequest(dc.replace(beam=beam + 1), confidence=True),
        DecodeRequest(dc, sampling=Sampling(seed=1), confidence=True),
    ]
    with caplog.at_level("WARNING", logger="translator.decode.calibrate"):
        for ask in asks:
            engine.translate(["Ein Hund läuft."], ask)
    said = [r.getMessage() for r in caplog.records if "calibrated under" in r.getMessage()]
    assert said == [
        f"the confidence is calibrated under beam {beam}; under beam {beam + 1} it is less "
        "reliable (translator calibrate --beam fits it again)",
        f"the confidence is calibrated under beam {beam}; under sampling it is less reliable "
        "(translator calibrate --beam fits it again)",
    ]
