"""What every search obeys, whichever picks the tokens (search.py, beam.py, and the
CTranslate2 engine's limits): the step's log-probabilities, length limits, the forced end,
the banned specials, the length penalty, the hypothesis they produce, and the cut of an
input longer than the model takes."""

from __future__ import annotations

import logging
from dataclasses import dataclass

import torch

from translator.models.base import Seq2Seq, State, log_softmax
from translator.specials import BOS, EOS, PAD, UNK

log = logging.getLogger(__name__)


@dataclass
class Hypothesis:
    tokens: list[int]  # without <bos>/<eos>
    score: float  # length-normalised log-probability
    # Where the search was asked for a decoder layer's attention: its weights while producing
    # each token and the <eos>, [len(tokens) + 1, source positions of the batch], float32.
    attention: torch.Tensor | None = None


def next_log_probs(
    model: Seq2Seq, prev: torch.Tensor, state: State, layer: int | None
) -> tuple[torch.Tensor, State, torch.Tensor | None]:
    """The step's float32 log-probabilities [N, V] (`model.log_probs`), the next state, and
    decoder `layer`'s attention weights [N, S] where `layer` is not None (else None).
    `step_attention` gives the logits of `step`, normalised here as `log_probs` does, so
    asking for the weights changes no output."""
    if layer is None:
        logp, state = model.log_probs(prev, state)
        return logp, state, None
    logits, state, weights = model.step_attention(prev, state, layer)
    return log_softmax(logits), state, weights.float()


def max_lengths(src: torch.Tensor, a: float, b: int, steps: int | None = None) -> torch.Tensor:
    """Output tokens allowed per sentence, <eos> not counted; `steps` (the decoder steps the
    model can take) keeps one step for the <eos>."""
    src_len = (src != PAD).sum(1)
    return (a * src_len.float() + b).long().clamp(min=1, max=None if steps is None else steps - 1)


def mask_specials(logp: torch.Tensor, allow_unk: bool, never=()) -> torch.Tensor:
    """<pad> and <bos> never appear in an output, and <unk> only on request: the detokenizer
    drops them, so a hypothesis would be ranked on tokens its text does not show. Nor do
    the ids in `never` (a model's never_output: corpus tags)."""
    banned = [PAD, BOS, *never] if allow_unk else [PAD, BOS, UNK, *never]
    logp[:, banned] = float("-inf")
    return logp


def force_eos(logp: torch.Tensor, rows: torch.Tensor) -> torch.Tensor:
    """Rows at their length limit can only end: every token but <eos> gets -inf."""
    at = rows.nonzero().squeeze(1)
    if at.numel():  # (most steps have none: a [N, V] mask would cost more than the rest)
        end = logp[at, EOS]
        logp[at] = float("-inf")
        logp[at, EOS] = end
    return logp


def length_penalty(length, alpha: float):
    """GNMT's ((5 + |Y|) / 6) ** alpha (Wu et al. 2016), of a tensor of lengths or one."""
    return ((5.0 + length) / 6.0) ** alpha


def nbest_problem(nbest: int, beam: int) -> str | None:
    """What is wrong with asking a search of width `beam` for `nbest` outputs, if anything."""
    if nbest > beam:
        return f"nbest {nbest} needs a beam of at least {nbest} (beam is {beam})"
    return None


def cut(ids: list[list[int]], limit: int | None, lines: list[int]) -> list[list[int]]:
    """Each sequence of more than `limit` ids cut to its first limit - 1 and its last (the
    end token), with a warning naming its line (1 + lines[j])."""
    for j, s in enumerate(ids):
        if limit is not None and len(s) > limit:
            log.warning(
                "line %d: %d subwords, cut to the model's limit of %d", lines[j] + 1, len(s), limit
            )
            ids[j] = s[: limit - 1] + s[-1:]
    return ids
