"""CTranslate2's searches as the exported engine (engines/ct2.py) runs them: a beam search
whose hypotheses come back with log-probabilities as translator's search adds them up, the
target prefix's log-probability added back, and a greedy pass forced through hypotheses to
read their attention."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from translator.config import DecodeConfig


@dataclass(frozen=True)
class Searcher:
    translator: Any  # a ctranslate2.Translator
    banned: list[list[str]]  # pieces never output (suppress_sequences)
    eos: str  # the </s> piece
    use_vmap: bool  # the export's vocabulary shortlist

    def search(
        self, sources: list[list[str]], length: int, dc: DecodeConfig, prefix, attention=False,
        skip: int = 0,
    ) -> list:  # fmt: skip
        """Per sentence: [pieces without <eos>, log-probability, ended, attention] of each
        hypothesis; `prefix`: the target pieces each begins with, or None, the first `skip`
        a forced start that the log-probability leaves out; `attention`: the hypothesis's
        attention rows [pieces and <eos>][source pieces] kept (else None)."""
        alpha = dc.len_penalty if dc.len_penalty != 0 else 1e-6
        outputs = self.translator.translate_batch(
            sources,
            target_prefix=prefix,
            beam_size=dc.beam,
            num_hypotheses=dc.beam,
            length_penalty=alpha,
            disable_unk=not dc.allow_unk,
            suppress_sequences=self.banned,
            max_input_length=0,
            max_decoding_length=length,
            min_decoding_length=0,
            return_scores=True,
            return_end_token=True,
            return_attention=attention,
            use_vmap=self.use_vmap,
        )
        given = self.prefix_logprobs(sources, prefix, skip)
        found = []
        for n, out in enumerate(outputs):
            hyps = []
            weights = out.attention if attention else [None] * len(out.hypotheses)
            for pieces, score, att in zip(out.hypotheses, out.scores, weights):
                # CTranslate2's penalty undone; its score leaves a target prefix out, ours not
                logprob = score * max(len(pieces), 1) ** alpha + given[n]
                ended = bool(pieces) and pieces[-1] == self.eos
                hyps.append([pieces[:-1] if ended else pieces, logprob, ended, att])
            found.append(hyps)
        return found

    def prefix_logprobs(self, sources: list[list[str]], prefix, skip: int) -> list[float]:
        """Each sentence's log-probability of its target prefix (pieces; None: none) after
        its first `skip` (a forced language code, which the PyTorch engine's scores leave
        out, as transformers' do), which CTranslate2's search scores leave out."""
        out = [0.0] * len(sources)
        rows = [n for n, p in enumerate(prefix or ()) if len(p) > skip]
        if rows:
            scored = self.translator.score_batch(
                [sources[n] for n in rows], [prefix[n] for n in rows], max_input_length=0
            )
            for n, result in zip(rows, scored):
                out[n] = sum(result.log_probs[skip : len(prefix[n])])
        return out

    def forced_attention(self, sources: list[list[str]], lists: list, start, piece) -> list:
        """`lists` (per sentence, its ranked (shown tokens, (score, attention))) with each
        hypothesis's attention read by a greedy pass forced through `start`, its tokens and
        <eos>: rows [those pieces][source pieces]; `piece`: a target id's piece. (A beam
        search hands a sentence of a batch of several the attention of another one; the
        greedy search does not.)"""
        rows = [(n, i) for n, ranked in enumerate(lists) for i in range(len(ranked))]
        if not rows:
            return lists
        targets = [[piece(t) for t in (*start, *lists[n][i][0])] + [self.eos] for n, i in rows]
        out = self.translator.translate_batch(
            [sources[n] for n, _ in rows], target_prefix=targets, beam_size=1,
            max_decoding_length=max(map(len, targets)), max_input_length=0,
            return_attention=True, return_end_token=True,
        )  # fmt: skip
        lists = [list(ranked) for ranked in lists]
        for (n, i), target, result in zip(rows, targets, out):
            tokens, (score, _) = lists[n][i]
            lists[n][i] = (tokens, (score, result.attention[0][: len(target)]))
        return lists
