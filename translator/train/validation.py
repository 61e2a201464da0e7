"""Dev-set checks during training: teacher-forced loss, batched-decoding BLEU, and a few
dev translations for a person to watch."""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import torch

from translator.decode.evaluate import bleu
from translator.decode.request import DecodeRequest
from translator.decode.translator import Translator
from translator.runtime import autocast
from translator.train.loss import sequence_loss

# dev pairs shown at each validation: the first ones, the same every time, so that a person
# sees the same sentences improve
EXAMPLES = 3


@dataclass
class DevSet:
    """The dev pairs of one direction (`name`, e.g. "en-de"; None for a model of one), the
    source ids put before each (its language tag) and its batches for the loss."""

    name: str | None
    pairs: list
    prefix: list[int]
    batches: object


@dataclass
class Validation:
    """One look at the dev set: loss per target token (no smoothing), BLEU, the seconds it
    took, and the dev translations in the order of the dev pairs. A model of several
    directions has each one's loss and BLEU in `directions`; dev_loss and dev_bleu are
    their means, and the translations are the first direction's."""

    step: int
    dev_loss: float
    dev_bleu: float
    seconds: float
    hypotheses: list[str] = field(default_factory=list)
    directions: dict[str, dict] = field(default_factory=dict)

    def entry(self, minutes: float) -> dict:
        """The record validations.jsonl and summary.json keep; `minutes`: wall clock since the
        run's start, this validation included (for `translator curves`)."""
        return {
            "step": self.step,
            "dev_loss": self.dev_loss,
            "dev_bleu": self.dev_bleu,
            "seconds": self.seconds,
            "minutes": minutes,
            **({"directions": self.directions} if self.directions else {}),
        }

    def report(self, note: str, dev_pairs, n: int = EXAMPLES) -> list[str]:
        """The lines to print: the scores and `note` (how they compare), the first `n` dev
        pairs and their translations."""
        lines = [
            f"validation step {self.step}: dev loss {self.dev_loss:.3f}, "
            f"dev BLEU {self.dev_bleu:.2f} ({self.seconds:.1f}s){note}"
        ]
        if self.directions:
            lines[0] = lines[0].replace("dev loss", "mean dev loss", 1)
            lines += ["  " + ", ".join(
                f"{name} BLEU {d['dev_bleu']:.2f}" for name, d in self.directions.items()
            )]  # fmt: skip
        pairs = zip(dev_pairs, self.hypotheses[:n])
        for i, ((source, reference), hypothesis) in enumerate(pairs, 1):
            lines += [
                f"  example {i} source:     {source}",
                f"  example {i} reference:  {reference}",
                f"  example {i} hypothesis: {hypothesis}",
            ]
        return lines


@torch.no_grad()
def validate(model, tokenizer, cfg, devs: list[DevSet], device, dtype, step: int) -> Validation:
    """Each dev set after `step` steps, translated with `train.valid_beam`."""
    start = time.perf_counter()
    model.eval()
    # On a CPU the search runs in float32, as `translator eval` does: bf16 decoding there
    # gains little and leaves oneDNN holding memory for the rest of the run.
    translator = Translator(
        model, tokenizer, cfg, device, torch.float32 if device.type == "cpu" else dtype
    )
    decode = cfg.decode.replace(beam=cfg.train.valid_beam)
    scores, first = {}, []
    for dev in devs:
        total = tokens = 0.0
        for idx in dev.batches.epoch(0):
            batch = dev.batches.collate(idx).to(device)
            with autocast(device, dtype):
                total += float(sequence_loss(model, batch, 0.0))
            tokens += batch.n_tokens
        request = DecodeRequest(decode, source=tuple(dev.prefix))
        hyps = [r[0].text for r in translator.translate([s for s, _ in dev.pairs], request)]
        first = first or hyps
        scores[dev.name] = {
            "dev_loss": total / max(tokens, 1),
            "dev_bleu": bleu(hyps, [t for _, t in dev.pairs]),
        }
    model.train()
    mean = {k: sum(d[k] for d in scores.values()) / len(scores) for k in ("dev_loss", "dev_bleu")}
    return Validation(
        step=step,
        **mean,
        seconds=time.perf_counter() - start,
        hypotheses=first,
        directions={n: d for n, d in scores.items() if n is not None},
    )
