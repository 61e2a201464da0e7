"""Word alignments from a model's attention: which source words each translated word
comes from, as (i, j) pairs of 0-based word indices (i: the source line's, j: the
translation's), where words are the whitespace tokens (`text.split()`) of the source line
as given and of the output text. As text they are Pharaoh's "i-j i-j ...", sorted by
(i, j), the format of fast_align, Marian and eflomal.

The attention a search gives is over subwords (sentencepiece pieces): a piece that begins
with "▁" begins a word, the others continue the word before. `word_alignment` adds the
weights up over the pieces of each source word and of each target word, and aligns every
target word to the source word that received the most (module function's docstring says
why). `forced_attention` gives the weights for a translation that is already known (a
reference being scored, an output of a search that kept none), by reading it through the
model one step at a time, as the search did.
"""

from __future__ import annotations

import numpy as np
import torch

from translator.data.pharaoh import Alignment
from translator.models.base import Seq2Seq
from translator.specials import BOS, PAD

WORD_START = "\u2581"  # sentencepiece's mark of a piece that begins a word


def started_words(text: str, normalize=None) -> list[int]:
    """For each word the subword pieces of `text` begin (each "▁" start), the index of the
    whitespace word of `text` it is part of. `normalize`: the subword model's normaliser,
    which can drop a word (a zero-width space or a control character alone) or split one (at
    a zero-width space); without it, piece word i is word i."""
    words = text.split()
    if normalize is None:
        return list(range(len(words)))
    return [i for i, word in enumerate(words) for _ in range(normalize(word).count(WORD_START))]


def _piece_words(text: str, pieces: list[str], normalize) -> list[int]:
    """started_words, where the normaliser's words are the pieces' (a text the pieces do
    not spell, such as bytes decoded into replacement characters, counts word by word)."""
    found = started_words(text, normalize)
    starts = sum(p.startswith(WORD_START) or not i for i, p in enumerate(pieces))
    return found if len(found) == starts else started_words(text)


def word_of_piece(pieces: list[str], words: list[int]) -> list[int]:
    """The index of the word each piece belongs to: a piece beginning with "▁" starts the
    next of `words` (started_words). Where the pieces mark more word starts than that (a
    normaliser we were not given), the extra ones join the last word."""
    found, current = [], -1
    for piece in pieces:
        if piece.startswith(WORD_START) or current < 0:
            current += 1
        found.append(words[min(current, len(words) - 1)])
    return found


def word_alignment(
    weights,
    source_pieces: list[str],
    target_pieces: list[str],
    source: str,
    target: str,
    tokenizer=None,
) -> Alignment:
    """The word alignment of `source` and its translation `target` from attention
    `weights` [target positions, source positions] (array or tensor), whose first
    len(target_pieces) rows are those pieces' and first len(source_pieces) columns those
    pieces' (the caller slices off language tags before them; rows and columns after them,
    <eos> and padding, are left out). `tokenizer`: the one that made the pieces, whose
    normalisers tell which words gave which pieces.

    Each target word is aligned to the one source word whose pieces got the largest sum of
    its pieces' weights. Summing over a word's pieces makes the word the unit on both
    sides: a source word split into three pieces competes with its whole weight, not with
    its best piece alone, and a target word's pieces vote together. Taking one source word
    per target word (the argmax, as Marian's and fairseq's attention alignments do) gives
    every translated word exactly one source word, which is what carrying markup across
    needs; a blank line on either side gives no pairs."""
    sides = (tokenizer.src, tokenizer.tgt) if tokenizer is not None else (None, None)
    src_words, tgt_words = (
        _piece_words(text, pieces, getattr(side, "normalize", None))
        for text, pieces, side in zip((source, target), (source_pieces, target_pieces), sides)
    )
    n_src, n_tgt = len(source.split()), len(target.split())
    if not src_words or not tgt_words or not source_pieces or not target_pieces:
        return ()
    w = weights.float().cpu().numpy() if isinstance(weights, torch.Tensor) else weights
    w = np.asarray(w, dtype=np.float64)[: len(target_pieces), : len(source_pieces)]
    rows = np.zeros((n_tgt, w.shape[1]))
    np.add.at(rows, word_of_piece(target_pieces[: w.shape[0]], tgt_words), w)
    summed = np.zeros((n_tgt, n_src))
    np.add.at(summed.T, word_of_piece(source_pieces[: w.shape[1]], src_words), rows.T)
    # (a target word that got no piece, one the normaliser dropped, is aligned to nothing)
    return tuple(sorted((int(summed[j].argmax()), j) for j in sorted(set(tgt_words))))


@torch.no_grad()
def forced_attention(
    model: Seq2Seq, src: torch.Tensor, tokens: list[list[int]], layer: int
) -> list[torch.Tensor]:
    """Decoder `layer`'s attention weights [len(tokens) + 1, S] for each row of `src`
    [n, S] producing its target `tokens` (without <bos>/<eos>) and then <eos>: the model
    fed each target, one step at a time, as a search feeds its output (so the weights are
    those the search would have kept)."""
    n, longest = src.size(0), max((len(t) for t in tokens), default=0)
    fed = torch.full((n, longest + 1), PAD, dtype=torch.long, device=src.device)
    fed[:, 0] = BOS
    for row, toks in enumerate(tokens):
        fed[row, 1 : len(toks) + 1] = torch.tensor(toks, dtype=torch.long)
    state = model.init_state(model.encode(src))
    steps = []
    for t in range(longest + 1):  # rows whose target has ended read padding: not kept
        _, state, weights = model.step_attention(fed[:, t], state, layer)
        steps.append(weights.float())
    seen = torch.stack(steps, 1)  # [n, longest + 1, S]
    return [seen[row, : len(toks) + 1] for row, toks in enumerate(tokens)]
