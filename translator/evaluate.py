"""Corpus-level scores through sacreBLEU, with its reproducibility signatures."""

from __future__ import annotations

from sacrebleu.metrics import BLEU, CHRF, TER


def score(hypotheses: list[str], references: list[str]) -> dict:
    """BLEU, chrF and TER of hypotheses against one reference each."""
    assert len(hypotheses) == len(references)
    refs = [references]
    bleu, chrf, ter = BLEU(), CHRF(), TER()
    b = bleu.corpus_score(hypotheses, refs)
    c = chrf.corpus_score(hypotheses, refs)
    t = ter.corpus_score(hypotheses, refs)
    return {
        "bleu": round(b.score, 2),
        "chrf": round(c.score, 2),
        "ter": round(t.score, 2),
        "signature": str(bleu.get_signature()),
        "chrf_signature": str(chrf.get_signature()),
        "ter_signature": str(ter.get_signature()),
        "n": len(hypotheses),
    }


def bleu(hypotheses: list[str], references: list[str]) -> float:
    return BLEU().corpus_score(hypotheses, [references]).score
