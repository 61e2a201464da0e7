"""Confidence from a CTranslate2 export: the export carries the checkpoint's calibration, a
float32 export reports the checkpoint's confidence (within 1e-3) on the lines where both
find the same hypotheses, `translator info` shows the calibration, and a manifest whose
calibration was edited is a one-line error."""

import json
import shutil

import pytest
from checkpoints import needs_ct2
from commandline import run_cli
from util import user_error

from translator.data.corpus import load_split
from translator.engines.ct2 import ExportedTranslator
from translator.engines.export import export_checkpoint
from translator.engines.load import load_engine

pytestmark = needs_ct2


@pytest.fixture(scope="module")
def exported(transformer, tmp_path_factory):
    """(checkpoint calibrated on its dev split, its float32 export, its int8 export, an
    export of the same checkpoint before calibration, test sources)."""
    import contextlib
    import io

    from commandline import cli_captured

    root = tmp_path_factory.mktemp("confidence-ct2")
    ckpt = root / "model.pt"
    shutil.copy(transformer[0], ckpt)
    _, raw = export_checkpoint(ckpt, "ctranslate2", "float32", root / "raw")
    with contextlib.redirect_stderr(io.StringIO()):
        outcome = cli_captured("calibrate", "--checkpoint", str(ckpt))
    assert outcome.returncode == 0, outcome.stderr
    _, f32 = export_checkpoint(ckpt, "ctranslate2", "float32", root / "f32")
    _, int8 = export_checkpoint(ckpt, "ctranslate2", "int8", root / "int8")
    engine = load_engine(ckpt, "cpu")
    sources = [s for s, _ in load_split(engine.cfg.data, "test", engine.cfg.seed)][:40]
    return ckpt, f32, int8, raw, sources + [""]


def _same_hypotheses(a, b) -> bool:
    return [h.tokens for h in a] == [h.tokens for h in b]


@pytest.mark.parametrize("beam", [1, 2])
def test_a_float32_export_reports_the_checkpoints_confidence(exported, beam):
    """The token log-probabilities are scored again without CTranslate2's renormalisation,
    so where the searches agree (all greedy outputs; nearly all of a beam's, engines/ct2.py)
    every feature, and so the confidence, is the checkpoint's."""
    ckpt, f32, _, _, sources = exported
    pytorch, ct2 = load_engine(ckpt, "cpu"), ExportedTranslator(f32, workers=1)
    assert ct2.calibration is not None and ct2.calibration == pytorch.calibration
    request = pytorch.request(decode=pytorch.cfg.decode.replace(beam=beam), confidence=True)
    ours, theirs = pytorch.translate(sources, request), ct2.translate(sources, request)
    asked = request.replace(nbest=beam, confidence=False)  # the whole beam: the features' input
    same = [
        _same_hypotheses(a, b)
        for a, b in zip(pytorch.translate(sources, asked), ct2.translate(sources, asked))
    ]
    assert sum(same) >= 0.9 * len(sources) and (beam > 1 or all(same))
    for a, b, agree in zip(ours, theirs, same):
        assert 0.0 <= b[0].confidence <= 1.0
        if agree:
            assert b[0].confidence == pytest.approx(a[0].confidence, abs=1e-3)
            assert b[0].word_confidence == pytest.approx(a[0].word_confidence, abs=1e-3)


def test_int8_export_reports_a_confidence_of_its_own(exported):
    """int8 changes the log-probabilities: its confidence is reported, not asserted equal."""
    ckpt, _, int8, _, sources = exported
    pytorch, ct2 = load_engine(ckpt, "cpu"), ExportedTranslator(int8, workers=1)
    request = pytorch.request(confidence=True)
    ours, theirs = pytorch.translate(sources, request), ct2.translate(sources, request)
    gaps = [abs(a[0].confidence - b[0].confidence) for a, b in zip(ours, theirs)]
    assert all(0.0 <= b[0].confidence <= 1.0 for b in theirs)
    print(f"int8 export: mean |confidence gap| {sum(gaps) / len(gaps):.4f}, max {max(gaps):.4f}")


def test_translate_and_info_read_the_exports_calibration(exported, capsys):
    ckpt, f32, _, raw, sources = exported
    lines = sources[:4]
    columns = {}
    for model in (ckpt, f32):
        args = ["translate", "--checkpoint", str(model), "--device", "cpu", "--beam", "1"]
        code, out, err = run_cli(capsys, *args, "--min-confidence", "0.5", *lines)
        assert code == 0, err
        columns[model] = [row.split("\t") for row in out.splitlines()]
    for a, b in zip(columns[ckpt], columns[f32]):
        assert (
            a[0] == b[0] and abs(float(a[1]) - float(b[1])) <= 1e-3 and b[2] in ("ok", "doubtful")
        )
    # n-best with alignments: each hypothesis its confidence, before its alignment
    args = ["translate", "--checkpoint", str(f32), "--nbest", "2", "--confidence", "--alignments"]
    code, out, err = run_cli(capsys, *args, lines[0])
    assert code == 0 and len(out.splitlines()) == 2, err
    for row in out.splitlines():
        cells = row.split("\t")
        assert len(cells) == 5 and 0.0 <= float(cells[3]) <= 1.0, row
    trained = []
    for model, word in ((ckpt, "calibrated"), (f32, "calibrated"), (raw, "uncalibrated")):
        code, out, err = run_cli(capsys, "info", str(model))
        assert code == 0, err
        line = next(r for r in out.splitlines() if r.startswith("confidence:"))
        assert line.split()[1] == word, line
        trained.append(next(r for r in out.splitlines() if r.startswith("training:")))
    # an export tells how far its checkpoint trained
    assert trained[0] == trained[1] == trained[2] and trained[0].startswith("training: step "), (
        trained
    )
    code, _, err = run_cli(capsys, "translate", "--checkpoint", str(raw), "--min-confidence",
                           "0.5", lines[0])  # fmt: skip
    assert code == 2 and "no calibration" in err.strip().splitlines()[-1], err
    code, out, err = run_cli(capsys, "translate", "--checkpoint", str(raw), "--confidence",
                             lines[0])  # fmt: skip
    assert code == 0 and 0.0 < float(out.split("\t")[1]) <= 1.0, err  # uncalibrated, raw


def test_an_edited_calibration_in_the_manifest_is_a_one_line_error(exported, tmp_path):
    _, f32, _, _, _ = exported
    folder = tmp_path / "edited"
    shutil.copytree(f32, folder)
    manifest = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
    manifest["calibration"]["weights"] = [1.0]
    (folder / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    message = user_error(ExportedTranslator, folder)
    assert "manifest.json" in message and "'calibration'" in message, message
