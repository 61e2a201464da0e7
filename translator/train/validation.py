"""Dev-set checks during training: teacher-forced loss, batched-decoding BLEU, and a few
dev translations for a person to watch."""

from __future__ import annotations

import time
from dataclasses import replace

import torch

from translator.decode.evaluate import bleu
from translator.decode.translator import Translator
from translator.runtime import autocast
from translator.train.loss import sequence_loss

# dev pairs shown at each validation: the first ones, the same every time, so that a person
# sees the same sentences improve
EXAMPLES = 3


@torch.no_grad()
def validate(model, tokenizer, cfg, dev_pairs, dev_batches, device, dtype) -> dict:
    """Dev loss per target token (no smoothing), dev BLEU with `train.valid_beam`, and the
    dev translations ("hypotheses", in the order of `dev_pairs`)."""
    start = time.perf_counter()
    model.eval()
    total = tokens = 0.0
    for idx in dev_batches.epoch(0):
        batch = dev_batches.collate(idx).to(device)
        with autocast(device, dtype):
            total += float(sequence_loss(model, batch, 0.0))
        tokens += batch.n_tokens
    # On a CPU the search runs in float32, as `translator eval` does: bf16 decoding there is
    # barely faster and leaves oneDNN holding tens of MB for the rest of the run.
    translator = Translator(
        model, tokenizer, cfg, device, torch.float32 if device.type == "cpu" else dtype
    )
    decode = replace(cfg.decode, beam=cfg.train.valid_beam)
    hyps = [r[0].text for r in translator.translate([s for s, _ in dev_pairs], decode)]
    model.train()
    return {
        "dev_loss": total / max(tokens, 1),
        "dev_bleu": bleu(hyps, [t for _, t in dev_pairs]),
        "seconds": time.perf_counter() - start,
        "hypotheses": hyps,
    }


def report(result: dict, note: str, dev_pairs, hypotheses: list[str], n=EXAMPLES) -> list[str]:
    """The lines to print after a validation: its `result` and `note` (how it compares), the
    first `n` dev pairs and their translations."""
    lines = [
        f"validation step {result['step']}: dev loss {result['dev_loss']:.3f}, "
        f"dev BLEU {result['dev_bleu']:.2f} ({result['seconds']:.1f}s){note}"
    ]
    for i, ((source, reference), hypothesis) in enumerate(zip(dev_pairs, hypotheses[:n]), 1):
        lines += [
            f"  example {i} source:     {source}",
            f"  example {i} reference:  {reference}",
            f"  example {i} hypothesis: {hypothesis}",
        ]
    return lines
