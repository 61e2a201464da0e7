"""What every search obeys, whichever strategy picks the tokens (the search loop, loop.py,
and BeamStream, beam.py, apply it; the CTranslate2 engine takes the limits and the length
penalty): the step's log-probabilities, length limits, the forced end, the banned specials,
the length penalty, the hypothesis they produce, and the cut of an input longer than the
model takes."""

from __future__ import annotations

import dataclasses
import logging
from dataclasses import dataclass

import torch

from translator.models.base import Seq2Seq, State, log_softmax, pad_to
from translator.specials import BOS, EOS, PAD, UNK

log = logging.getLogger(__name__)


@dataclass
class Hypothesis:
    tokens: list[int]  # without <bos>/<eos>
    score: float  # length-normalised log-probability
    # Where the search was asked for a decoder layer's attention: its weights while producing
    # each token and the <eos>, [len(tokens) + 1, source positions of the batch], float32.
    attention: torch.Tensor | None = None
    # Each token's log-probability under the model and the <eos>'s last (len(tokens) + 1),
    # where the search kept them: what confidence is read from (decode/confidence.py).
    logprobs: list[float] | None = None


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


class TargetPrefixes:
    """The target ids each sentence's output must begin with (translate --prefix): ids
    [n, P], PAD after each prefix's end, and lengths [n]. A row still inside its prefix can
    take only the prefix's next token, scored by its log-probability under the model, so
    the search goes on from the prefix as if it had chosen it."""

    def __init__(self, prefixes: list[list[int]], device: torch.device):
        width = max([1, *map(len, prefixes)])
        self.ids = torch.full((len(prefixes), width), PAD, dtype=torch.long, device=device)
        for i, p in enumerate(prefixes):
            self.ids[i, : len(p)] = torch.tensor(p, dtype=torch.long)
        self.lengths = torch.tensor([len(p) for p in prefixes], dtype=torch.long, device=device)

    def take(self, rows: torch.Tensor) -> TargetPrefixes:
        """The prefixes of sentences `rows`, in that order."""
        out = TargetPrefixes([], self.ids.device)
        out.ids, out.lengths = self.ids[rows], self.lengths[rows]
        return out

    def _widen(self, width: int) -> None:
        if self.ids.size(1) < width:
            self.ids = pad_to(self.ids, (0, width))  # PAD after each prefix

    def place(self, slots: torch.Tensor, part: TargetPrefixes) -> None:
        """Sentences `slots` get the prefixes of `part`, in order."""
        width = max(self.ids.size(1), part.ids.size(1))
        self._widen(width)
        part._widen(width)
        self.ids[slots], self.lengths[slots] = part.ids, part.lengths

    @staticmethod
    def joined(parts: list[TargetPrefixes]) -> TargetPrefixes:
        """The sentences of `parts`, one after another."""
        width = max(p.ids.size(1) for p in parts)
        for p in parts:
            p._widen(width)
        out = TargetPrefixes([], parts[0].ids.device)
        out.ids = torch.cat([p.ids for p in parts])
        out.lengths = torch.cat([p.lengths for p in parts])
        return out

    def hold(self, logp: torch.Tensor, rows: torch.Tensor, t: torch.Tensor):
        """Before any mask: for the rows of `logp` (sentence `rows` [N] of these prefixes,
        at steps `t` [N]) inside their prefix, (which rows, their forced token, its
        log-probability), or None where none is."""
        at = (self.lengths[rows] > t).nonzero().squeeze(1)
        if not at.numel():
            return None
        token = self.ids[rows[at], t[at]]
        return at, token, logp[at, token]

    @staticmethod
    def force(logp: torch.Tensor, held) -> torch.Tensor:
        """After the masks: the held rows can take only their forced token."""
        if held is not None:
            at, token, value = held
            logp[at] = float("-inf")
            logp[at, token] = value
        return logp


def length_penalty(length, alpha: float, norm: str = "gnmt"):
    """What a hypothesis of `length` tokens (<eos> included; a tensor of lengths or one) has
    its log-probability divided by: GNMT's ((5 + |Y|) / 6) ** alpha (Wu et al. 2016), or
    |Y| ** alpha where `norm` is "power" (decode.len_norm)."""
    return (length if norm == "power" else (5.0 + length) / 6.0) ** alpha


def nbest_problem(nbest: int, beam: int) -> str | None:
    """What is wrong with asking a search of width `beam` for `nbest` outputs, if anything."""
    if nbest > beam:
        return f"nbest {nbest} needs a beam of at least {nbest} (beam is {beam})"
    return None


def phrases_problem(count: int, beam: int, kind: str = "required phrases") -> str | None:
    """What is wrong with a search of width `beam` for a text with `count` phrases it must
    hold, if anything: a beam of k keeps k - 1 of them apart."""
    if count >= beam:
        return f"{count} {kind} need a beam of at least {count + 1} (beam is {beam})"
    return None


def cut(
    ids: list[list[int]], limit: int | None, lines: list[int], side: str = "", framing: int = 1
) -> list[list[int]]:
    """Each sequence of more than `limit` ids cut to its first limit - 1 and its last (the
    end token), with a warning naming its line (1 + lines[j]) and `side` ("source ",
    "target ") where there are two; `framing`: the ids of each that are not the line's
    subwords (</s>, <bos>, tags), which the warning does not count."""
    for j, s in enumerate(ids):
        if limit is not None and len(s) > limit:
            log.warning("%sline %d: %d subwords, cut to the model's limit of %d",
                        side, lines[j] + 1, len(s) - framing, limit - framing)  # fmt: skip
            ids[j] = s[: limit - 1] + s[-1:]
    return ids


def unforced(hyps: list[Hypothesis], skip: int, dc) -> list[Hypothesis]:
    """One sentence's hypotheses rescored without the log-probabilities of their first
    `skip` tokens, a forced start the same in all (transformers scores a forced token 0; a
    constant would still reorder hypotheses of different lengths once normalised), best
    first; the length penalty still counts those tokens."""
    if not skip or any(h.logprobs is None for h in hyps):
        return hyps
    out = []
    for h in hyps:
        norm = float(length_penalty(torch.tensor(len(h.tokens) + 1), dc.len_penalty, dc.len_norm))
        out.append(dataclasses.replace(h, score=h.score - sum(h.logprobs[:skip]) / norm))
    return sorted(out, key=lambda h: -h.score)
