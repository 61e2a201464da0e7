"""translate --min-confidence X: every line kept, a column marking those whose calibrated
confidence is under X, for arguments and files; without a calibration, or with X outside
[0, 1], a one-line error."""

import shutil

import pytest
from commandline import run_cli


@pytest.fixture(scope="module")
def calibrated(transformer, tmp_path_factory):
    root = tmp_path_factory.mktemp("min-confidence")
    path, raw = root / "model.pt", root / "raw.pt"
    shutil.copy(transformer[0], path)
    shutil.copy(transformer[0], raw)
    return path, raw


LINES = [
    "Ein Hund läuft.",
    "Zwei Katzen schlafen auf dem roten Sofa.",
    "Ein Mann fährt Fahrrad.",
    "Frauen spielen im Park Fußball mit ihren Kindern.",
]


def _one_error(code: int, err: str, *needles: str) -> None:
    assert code == 2 and len(err.strip().splitlines()) >= 1, err
    last = err.strip().splitlines()[-1]
    assert "Traceback" not in err and last.startswith("error: "), err
    for needle in needles:
        assert needle in last, (needle, last)


def test_lines_under_the_threshold_are_marked_and_every_line_is_kept(calibrated, tmp_path, capsys):
    path, _ = calibrated
    code, _, err = run_cli(capsys, "calibrate", "--checkpoint", str(path))
    assert code == 0, err
    base = ["translate", "--checkpoint", str(path), "--device", "cpu"]
    code, out, err = run_cli(capsys, *base, "--confidence", *LINES)
    assert code == 0, err
    plain = [row.split("\t") for row in out.splitlines()]
    scores = sorted(float(r[1]) for r in plain)
    threshold = (scores[1] + scores[2]) / 2  # two lines each side
    code, out, err = run_cli(capsys, *base, "--min-confidence", str(threshold), *LINES)
    assert code == 0, err
    rows = [row.split("\t") for row in out.splitlines()]
    assert len(rows) == len(LINES) and [r[:2] for r in rows] == [r[:2] for r in plain]
    for _, conf, mark in rows:
        assert mark == ("doubtful" if float(conf) < threshold else "ok")
    assert sorted(r[2] for r in rows) == ["doubtful", "doubtful", "ok", "ok"]
    # the mark sits before the alignments
    code, out, err = run_cli(capsys, *base, "--min-confidence", str(threshold), "--alignments",
                             *LINES)  # fmt: skip
    assert code == 0, err
    assert [r.split("\t")[:3] for r in out.splitlines()] == rows
    # a file, blank lines included, keeps its lines; another threshold is another job
    src, dst = tmp_path / "in.de", tmp_path / "out.en"
    src.write_text("\n".join([LINES[0], "", *LINES[1:]]) + "\n", encoding="utf-8")
    for x in (threshold, 1.0):
        code, _, err = run_cli(capsys, *base, "--input", str(src), "--output", str(dst),
                               "--min-confidence", str(x))  # fmt: skip
        assert code == 0, err
        written = [r.split("\t") for r in dst.read_text(encoding="utf-8").splitlines()]
        assert len(written) == len(LINES) + 1 and written[1] == ["", "0.0000", "doubtful"]
        marks = [r[2] for r in written[:1] + written[2:]]
        assert marks == ([r[2] for r in rows] if x < 1 else ["doubtful"] * len(LINES))


def test_min_confidence_mistakes_are_one_line_errors(calibrated, capsys):
    path, raw = calibrated
    base = ["translate", "--device", "cpu"]
    code, _, err = run_cli(capsys, *base, "--checkpoint", str(raw), "--min-confidence", "0.5",
                           "Ein Hund.")  # fmt: skip
    _one_error(code, err, "--min-confidence", "no calibration", "translator calibrate")
    for bad in ("2", "-0.1", "nan"):
        code, _, err = run_cli(capsys, *base, "--checkpoint", str(path), "--min-confidence", bad,
                               "Ein Hund.")  # fmt: skip
        _one_error(code, err, "--min-confidence")
    code, _, err = run_cli(capsys, *base, "--checkpoint", str(path), "--min-confidence", "0.5",
                           "--interactive")  # fmt: skip
    _one_error(code, err, "--min-confidence adds a column", "--interactive")


def test_the_attention_picture_refuses_columns_and_nbest_by_name(calibrated, capsys, tmp_path):
    picture = str(tmp_path / "a.png")
    base = ["translate", "--device", "cpu", "--checkpoint", str(calibrated[1])]
    for extra, needles in ((["--alignments"], ("--alignments adds a column", "--plot-attention")),
                           (["--confidence"], ("--confidence adds a column", "--plot-attention")),
                           (["--nbest", "2"], ("--plot-attention", "--nbest, not both"))):  # fmt: skip
        code, _, err = run_cli(capsys, *base, *extra, "--plot-attention", picture, "Ein Hund.")
        _one_error(code, err, *needles)


class Sure:
    """A translator that upper-cases with a confidence of 0.3 or 0.7 (odd or even line
    length), and stops (like Ctrl-C) after `stop_after` chunks."""

    max_target, source_prefix = 10_000, ()

    def __init__(self, stop_after=None):
        self.calls, self.stop_after = 0, stop_after

    def translate(self, lines, request, progress=False):
        from translator.decode.translator import Translation

        if self.stop_after is not None and self.calls >= self.stop_after:
            raise KeyboardInterrupt
        self.calls += 1
        return [[Translation(t.upper(), 0.0, confidence=0.3 + 0.4 * (len(t) % 2))] for t in lines]


def test_a_stopped_file_resumes_only_under_the_same_threshold(tmp_path, monkeypatch):
    from translator.config import DecodeConfig
    from translator.decode import resumable, translate_io
    from translator.decode.request import DecodeRequest

    monkeypatch.setattr(translate_io, "FILE_CHUNK", 3)
    src, out = tmp_path / "in.txt", tmp_path / "out.txt"
    lines = [f"line {'x' * i}" for i in range(10)]
    src.write_text("\n".join(lines) + "\n", encoding="utf-8")

    def run(translator, threshold):
        request = DecodeRequest(DecodeConfig(), confidence=True, min_confidence=threshold)
        resumable.translate_file(translator, src, out, request, "m")

    with pytest.raises(KeyboardInterrupt):
        run(Sure(stop_after=2), 0.5)
    again = Sure()
    run(again, 0.5)
    assert again.calls == 2  # the six lines done were kept
    marks = [row.split("\t")[2] for row in out.read_text(encoding="utf-8").splitlines()]
    assert marks == ["ok" if len(t) % 2 else "doubtful" for t in lines]
    with pytest.raises(KeyboardInterrupt):
        run(Sure(stop_after=2), 0.5)
    other = Sure()
    run(other, 0.8)  # another threshold: another column, so the job starts over
    assert other.calls == 4
    assert {row.split("\t")[2] for row in out.read_text(encoding="utf-8").splitlines()} == {
        "doubtful"
    }
