"""Dev-set checks during training: teacher-forced loss and batched-decoding BLEU."""

from __future__ import annotations

import time
from dataclasses import replace

import torch

from translator.evaluate import bleu
from translator.inference import Translator
from translator.objective import sequence_loss
from translator.runtime import autocast


@torch.no_grad()
def validate(model, tokenizer, cfg, dev_pairs, dev_batches, device, dtype) -> dict:
    """Dev loss per target token (no smoothing) and dev BLEU with `train.valid_beam`."""
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
    }
