"""Subword regularization (tokenizer.sampling_alpha): every training batch is cut with a
segmentation drawn afresh, from the prepared data as it is read.

Prepared data holds each pair's one best segmentation. A batch's rows are turned back into
text (sentencepiece's decode) and encoded again with sampling: a unigram model draws a
segmentation (Kudo 2018), a BPE model drops merges (BPE-dropout, Provilkov et al. 2020).
So each epoch sees other segmentations of the same pairs, whatever was prepared; dev, test
and translation never sample. The draw is seeded by (seed, epoch, batch), so a resumed run
cuts the same batches with a unigram model; sentencepiece's BPE-dropout follows the seed
only within one process. A drawn segmentation longer than model.max_positions gives way to
the best one.

Sampled segmentations are longer than the best one. The epoch is planned with each pair's
length times the mean growth measured on a sample at the start, so that a batch still
holds about train.batch_tokens tokens. They also vary around that length, so rows planned
together would carry much padding: the rows of a few planned batches are drawn together
and cut again by their drawn lengths (data/batching.py, `redrawn_batches`).
"""

from __future__ import annotations

import logging
import zlib

import numpy as np
import sentencepiece as spm

from translator.data.batching import Batch, PairIds, batch_of
from translator.specials import BOS, EOS

log = logging.getLogger(__name__)

SAMPLE_ROWS = 2000  # pairs the growth of the lengths is measured on


class SampledIds(PairIds):
    """`ids` with every batch's segmentation drawn anew (module docstring)."""

    redraws = True

    def __init__(self, ids: PairIds, tokenizer, alpha: float, seed: int, limit: int):
        self.ids, self.alpha, self.seed, self.limit = ids, alpha, seed, limit
        self.src_sp, self.tgt_sp = tokenizer.src, tokenizer.tgt
        self.maps = ids.maps
        self.growth = self._growth()
        self.cost = np.ceil(np.asarray(ids.cost) * self.growth).astype(np.int32)
        log.info(
            f"subword sampling (alpha {alpha}): drawn segmentations {self.growth:.2f}x as long"
        )

    def _growth(self) -> float:
        """Mean sampled length over best length, measured on up to SAMPLE_ROWS pairs."""
        if not len(self.ids):
            return 1.0
        rng = np.random.default_rng(self.seed)
        rows = np.sort(rng.choice(len(self.ids), min(SAMPLE_ROWS, len(self.ids)), replace=False))
        src, tgt = self.ids.draw(rows)
        drawn = self._draw(src, tgt, (-1,))
        best = sum(map(len, src)) + sum(map(len, tgt))
        return max(1.0, (sum(map(len, drawn[0])) + sum(map(len, drawn[1]))) / max(1, best))

    def _draw(self, src, tgt, key: tuple) -> tuple[list[list[int]], list[list[int]]]:
        """New segmentations of the pairs, seeded by (seed, key); one that comes out longer
        than the limit keeps its best segmentation."""
        spm.set_random_generator_seed(zlib.crc32(repr((self.seed, *key)).encode()))
        out = []
        for sp, seqs, frame in (
            (self.src_sp, src, ([], [EOS])),
            (self.tgt_sp, tgt, ([BOS], [EOS])),
        ):
            texts = sp.decode([s[len(frame[0]) : -1] for s in seqs])
            # one thread: the draws then follow the seed alone
            drawn = sp.encode(texts, enable_sampling=True, alpha=self.alpha, nbest_size=-1,
                              num_threads=1)  # fmt: skip
            side = []
            for best, ids in zip(seqs, drawn):
                ids = [*frame[0], *ids, *frame[1]]
                side.append(ids if len(ids) <= self.limit else best)
            out.append(side)
        return out[0], out[1]

    def lengths(self, rows) -> tuple[np.ndarray, np.ndarray]:
        return self.ids.lengths(rows)

    def release(self) -> None:
        self.ids.release()

    def draw(self, rows, key: tuple = ()) -> tuple[list[list[int]], list[list[int]]]:
        return self._draw(*self.ids.draw(rows), key)

    def collate(self, rows, key: tuple = ()) -> Batch:
        return batch_of(*self.draw(rows, key))
