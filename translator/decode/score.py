"""Forced decoding: how likely a model finds a given translation.

A pair's score is the sum of the log-probabilities the model gives the target's subwords
and the final <eos>, each given the source and the target before it: the same numbers a
search adds up when it produces that target, so a beam hypothesis's score is this sum
divided by its length penalty. Used to filter and rerank corpora (`translator score`,
`translator filter`, the server's /score).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass

import torch

from translator.data.batching import pad_ids
from translator.decode.rules import cut
from translator.errors import UserError
from translator.models.base import Seq2Seq, log_softmax
from translator.progress import progress_bar
from translator.runtime import autocast
from translator.specials import PAD

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Score:
    logprob: float  # summed over the target's subwords and its <eos>
    tokens: int  # the target's subwords and its <eos>
    # (source word, target word) pairs of the forced target, where alignments were asked for
    alignment: tuple[tuple[int, int], ...] | None = None

    @property
    def mean(self) -> float:
        """Per-token log-probability: comparable across lengths (its negative is the
        cross-entropy that dual conditional filtering compares)."""
        return self.logprob / self.tokens

    def as_dict(self) -> dict:
        return {"logprob": self.logprob, "mean": self.mean, "tokens": self.tokens}


def check_aligned(sources: list[str], targets: list[str], names: tuple[str, str]) -> None:
    if len(sources) != len(targets):
        raise UserError(
            f"{names[0]} has {len(sources)} lines but {names[1]} has {len(targets)}: "
            "the files must be aligned line by line"
        )


def score_in_batches(
    tokenizer,
    sources: list[str],
    targets: list[str],
    limits: tuple[int, int | None],
    batch_size: int,
    progress: bool,
    run_batch: Callable[..., list[Score]],
    prefix=(),
    texts: bool = False,
) -> list[Score]:
    """Score aligned lines in batches of `batch_size` pairs sorted by length, with
    `run_batch(source ids, target ids)`; scores come back in input order. `limits`: the
    source subwords and decoder steps the model takes (longer lines are cut); `prefix`: the
    source ids put before each source (a corpus tag's); `texts`: `run_batch` is also handed
    each pair's (source, target) texts (`pairs=`), for their word alignments."""
    check_aligned(sources, targets, ("the source", "the target"))
    rows = list(range(len(sources)))
    src = [[*prefix, *s] for s in tokenizer.encode_src(sources)]
    src = cut(src, limits[0], rows, "source ", framing=1 + len(prefix))
    # [<bos>, subwords, <eos>]: the decoder reads all but the last, so `limits[1]` steps
    # take limits[1] + 1 ids; a longer target is scored as far as the model reads it.
    steps = None if limits[1] is None else limits[1] + 1
    tgt = cut(tokenizer.encode_tgt(targets), steps, rows, "target ", framing=2)
    order = sorted(range(len(src)), key=lambda i: (len(tgt[i]), len(src[i])))
    batches = [order[i : i + batch_size] for i in range(0, len(order), batch_size)]
    scores: list[Score | None] = [None] * len(src)
    bar = progress_bar(total=len(batches), desc="score", unit="batch", enabled=progress)
    with bar:
        for batch in batches:
            pairs = {"pairs": [(sources[i], targets[i]) for i in batch]} if texts else {}
            found = run_batch([src[i] for i in batch], [tgt[i] for i in batch], **pairs)
            for i, score in zip(batch, found):
                scores[i] = score
            bar.update()
    return scores  # type: ignore[return-value]


def teacher_forced(
    model: Seq2Seq,
    src: list[list[int]],
    tgt: list[list[int]],
    device: torch.device,
    dtype: torch.dtype,
    skip: int = 0,
) -> list[Score]:
    """The scores of one batch: every target read in one pass (the model's `forward`), its
    log-softmax normalised as the searches normalise each step (`log_probs`); the first
    `skip` target ids after <bos> (a forced start, engines/lang_codes.py) are read, not
    scored."""
    s = pad_ids(src).to(device)
    t = pad_ids(tgt).to(device)
    tgt_in, tgt_out = t[:, :-1], t[:, 1:]
    with torch.inference_mode(), autocast(device, dtype):
        logp = log_softmax(model(s, tgt_in))
    picked = logp.gather(-1, tgt_out.unsqueeze(-1)).squeeze(-1)
    real = tgt_out != PAD
    real[:, :skip] = False
    sums = picked.masked_fill(~real, 0.0).sum(1).tolist()
    return [Score(float(v), int(n)) for v, n in zip(sums, real.sum(1).tolist())]
