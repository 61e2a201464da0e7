"""`translator filter` writes all its outputs or none: a write that fails leaves no output
of the run in place."""

import os

import pytest
from util import assert_user_error

SOURCES = ["Ein Hund läuft.", "Zwei Katzen spielen im Garten.", "Die Frau liest."]
TARGETS = ["A dog runs.", "Two cats play in the garden.", "The woman reads."]


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
def test_a_scores_file_that_cannot_be_written_leaves_no_kept_pairs(three_steps, tmp_path, here):
    src, tgt = tmp_path / "pairs.de", tmp_path / "pairs.en"
    src.write_text("".join(s + "\n" for s in SOURCES), encoding="utf-8")
    tgt.write_text("".join(t + "\n" for t in TARGETS), encoding="utf-8")
    kept_src, kept_tgt = tmp_path / "kept.de", tmp_path / "kept.en"
    args = ["filter", "--checkpoint", str(three_steps), "--src", str(src), "--tgt", str(tgt),
            "--out-src", str(kept_src), "--out-tgt", str(kept_tgt), "--keep", "0.5"]  # fmt: skip
    result = here(*args, "--scores", "/dev/full")
    assert_user_error(result, "No space left on device")
    assert not kept_src.exists() and not kept_tgt.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["pairs.de", "pairs.en"]
    result = here(*args, "--scores", "/dev/null")
    assert result.returncode == 0, result.stderr
    assert len(kept_src.read_text().splitlines()) == len(kept_tgt.read_text().splitlines()) == 2
