"""translator eval --confidence and --plot-confidence: how well a calibrated and an
uncalibrated checkpoint's confidence ranks the test sentences and finds the wrong words."""

import json
import shutil

import pytest
from commandline import run_cli

from translator.data.corpus import load_split
from translator.decode.calibrate import fit
from translator.engines.load import load_engine
from translator.models.checkpoint import Checkpoint


@pytest.fixture(scope="module")
def checkpoints(transformer, tmp_path_factory):
    """(a copy calibrated on its dev split as `translator calibrate` does, a copy without)."""
    root = tmp_path_factory.mktemp("eval-confidence")
    plain, calibrated = root / "plain.pt", root / "calibrated.pt"
    shutil.copy(transformer[0], plain)
    shutil.copy(transformer[0], calibrated)
    engine = load_engine(calibrated, "cpu")
    pairs = load_split(engine.cfg.data, "dev", engine.cfg.seed)
    cal, _ = fit(engine, [s for s, _ in pairs], [t for _, t in pairs], engine.request())
    saved = Checkpoint.load(calibrated)
    saved.calibration = cal.to_dict()
    saved.save(calibrated)
    return calibrated, plain


def _eval(capsys, checkpoint, *args):
    return run_cli(capsys, "eval", "--checkpoint", str(checkpoint), "--device", "cpu", *args)


def _in_range(low_high, low=-1.0, high=1.0):
    return low <= low_high[0] <= low_high[1] <= high


def test_eval_confidence_of_a_calibrated_checkpoint(checkpoints, capsys):
    calibrated, _ = checkpoints
    code, out, err = _eval(capsys, calibrated, "--json")
    assert code == 0, err
    plain = json.loads(out)
    code, out, err = _eval(capsys, calibrated, "--json", "--confidence")
    assert code == 0, err
    result = json.loads(out)
    assert result["bleu"] == plain["bleu"]  # the same translations, confidence beside them
    conf = result["confidence"]
    assert conf["calibrated"] and conf["sentences"] == result["n"]
    for key in ("spearman", "pearson", "spearman_mean_logprob", "pearson_mean_logprob"):
        assert -1.0 <= conf[key] <= 1.0, key
    assert 0.0 <= conf["mae"] <= 1.0
    assert _in_range(conf["spearman_ci"]) and _in_range(conf["spearman_mean_logprob_ci"])
    assert _in_range(conf["spearman_gain_ci"], -2.0, 2.0)
    assert conf["spearman_gain"] == pytest.approx(
        conf["spearman"] - conf["spearman_mean_logprob"], abs=2e-4
    )
    words = conf["words"]
    assert words["labels"] == "TER with shifts" and 0 <= words["bad"] <= words["words"]
    assert words["words"] > 0
    for key in ("doubtful", "median_baseline"):
        assert all(0.0 <= words[key][m] <= 1.0 for m in ("precision", "recall", "f1")), key
    assert words["doubtful"]["threshold"] == pytest.approx(
        Checkpoint.load(calibrated).calibration["threshold"], abs=1e-4
    )
    code, text, err = _eval(capsys, calibrated, "--confidence")
    assert code == 0, err
    assert "confidence (calibrated)" in text and "mean log-probability alone" in text
    assert "doubtful" in text and "under the median" in text


def test_eval_confidence_of_an_uncalibrated_checkpoint_reports_the_raw_figures(checkpoints, capsys):
    _, plain = checkpoints
    code, out, err = _eval(capsys, plain, "--json", "--confidence")
    assert code == 0, err
    conf = json.loads(out)["confidence"]
    assert not conf["calibrated"] and -1.0 <= conf["spearman"] <= 1.0
    assert _in_range(conf["spearman_ci"])
    assert "mae" not in conf and "doubtful" not in conf["words"]
    assert "median_baseline" in conf["words"]
    code, text, err = _eval(capsys, plain, "--confidence")
    assert code == 0 and "uncalibrated" in text and "doubtful" not in text, err


def test_plot_confidence_writes_a_png(checkpoints, tmp_path, capsys):
    pytest.importorskip("matplotlib")
    picture = tmp_path / "confidence.png"
    code, _, err = _eval(capsys, checkpoints[0], "--confidence", "--plot-confidence", picture)
    assert code == 0, err
    assert picture.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_eval_confidence_mistakes(checkpoints, tmp_path, capsys):
    calibrated, _ = checkpoints
    for args, needle in [
        (["--plot-confidence", str(tmp_path / "c.png")], "add --confidence"),
        (["--confidence", "--plot-confidence", str(tmp_path / "no" / "c.png")], "does not exist"),
    ]:
        code, _, err = _eval(capsys, calibrated, *args)
        assert code == 2 and needle in err and len(err.strip().splitlines()) == 1, err
    assert not (tmp_path / "c.png").exists()


def test_blank_source_lines_are_left_out_of_the_confidence_figures(checkpoints, tmp_path, capsys):
    """A blank line's confidence and its empty pair's chrF are both 0 by rule: counted, each
    would be a tied point agreeing with any ranking (and pass calibrate's minimum)."""
    from translator.errors import UserError

    _, plain = checkpoints
    engine = load_engine(plain, "cpu")
    pairs = load_split(engine.cfg.data, "dev", engine.cfg.seed)
    figures = []
    for blanks in (0, 12):
        src, ref = tmp_path / f"s{blanks}.de", tmp_path / f"r{blanks}.en"
        src.write_text("".join(s + "\n" for s, _ in pairs) + "\n" * blanks)
        ref.write_text("".join(t + "\n" for _, t in pairs) + "\n" * blanks)
        code, out, err = _eval(capsys, plain, "--json", "--confidence", "--src", src, "--ref", ref)
        assert code == 0, err
        figures.append(json.loads(out)["confidence"])
    assert figures[1]["sentences"] == len(pairs) and figures[1]["blank_left_out"] == 12
    for key in ("spearman", "pearson", "spearman_ci"):
        assert figures[1][key] == figures[0][key], key
    nine = [s for s, _ in pairs[:9]] + [""] * 12
    with pytest.raises(UserError, match=r"got 9 \(12 blank lines left out\)"):
        fit(engine, nine, [t for _, t in pairs[:9]] + [""] * 12, engine.request())
