"""Checkpoints written earlier keep translating exactly as they did: the golden fixtures in
../shared/fixtures/golden (one small checkpoint per family and a CTranslate2 export, with
their outputs under several decoding settings, see its README) are reproduced by
`translator translate`, run in-process, line for line.

Texts must match byte for byte. An n-best list's scores are printed to 4 decimals, and the
recurrent families' last digit can differ between CPU kinds (AVX512 or AVX2 kernels sum in
another order), so those scores are compared to within 2e-4."""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest
from typer.testing import CliRunner

from translator.cli import app

GOLDEN = Path(__file__).resolve().parents[3] / "shared" / "fixtures" / "golden"
pytestmark = pytest.mark.skipif(not GOLDEN.is_dir(), reason=f"no golden fixtures at {GOLDEN}")


def cases() -> list[tuple[str, str, str]]:
    if not GOLDEN.is_dir():
        return []
    found = []
    for row in (GOLDEN / "settings.tsv").read_text(encoding="utf-8").splitlines():
        name, options = row.split("\t")
        for family in ("transformer", "lstm", "bahdanau", "luong", "transformer_ct2"):
            if (GOLDEN / f"{family}.{name}.en").is_file():
                found.append((family, name, options))
    return found


def same_nbest(got: list[str], want: list[str]) -> bool:
    """index TAB score TAB text lines: index and text exact, the score to within 2e-4."""
    if len(got) != len(want):
        return False
    for g, w in zip(got, want):
        (gi, gs, gt), (wi, ws, wt) = g.split("\t", 2), w.split("\t", 2)
        if gi != wi or gt != wt or abs(float(gs) - float(ws)) > 2e-4:
            return False
    return True


@pytest.mark.parametrize("family, name, options", cases())
def test_golden_outputs_are_reproduced(family, name, options, tmp_path):
    checkpoint = GOLDEN / (family if family.endswith("_ct2") else f"{family}.pt")
    out = tmp_path / "out.en"
    args = ["translate", "--checkpoint", str(checkpoint), *shlex.split(options)]
    args += ["--input", str(GOLDEN / "source.de"), "--output", str(out), "--device", "cpu"]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    want = (GOLDEN / f"{family}.{name}.en").read_bytes()
    if "--nbest" in options:
        got_lines, want_lines = out.read_text().splitlines(), want.decode().splitlines()
        assert same_nbest(got_lines, want_lines), f"{family} {name} differs"
    else:
        assert out.read_bytes() == want, f"{family} {name} differs"
