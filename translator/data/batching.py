"""Length-bucketed token batches, padded tensors.

A batch costs `rows * longest side` tokens (padding included), the quantity
memory and compute scale with, and stays within `batch_tokens`. Each epoch's
order is a pure function of (seed, epoch), so a resumed run can skip to the
exact batch it stopped at. The ids live in flat arrays with offsets (`PairIds`),
in memory or memory-mapped from a prepared dataset: an epoch is planned with
numpy from the lengths alone, and a batch is sliced out of the arrays.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np
import torch

from translator.data.encode import flatten
from translator.runtime import to_device
from translator.specials import PAD


@dataclass
class Batch:
    src: torch.Tensor  # [B, S] source ids, PAD-padded
    tgt_in: torch.Tensor  # [B, T] <bos> y1 .. yn
    tgt_out: torch.Tensor  # [B, T] y1 .. yn <eos>
    n_tokens: int  # real target tokens (the loss normaliser)
    # [B, T, S] bool: target position t (of tgt_out) aligned to source position s, for
    # guided alignment (data/align.py); None without it.
    align: torch.Tensor | None = None

    def split(self, pieces: int) -> list[Batch]:
        """The rows in `pieces` smaller batches (for retrying after running out of memory)."""
        if pieces <= 1 or self.src.size(0) < 2:
            return [self]
        out = []
        aligns = self.align.tensor_split(pieces) if self.align is not None else [None] * pieces
        for src, tgt_in, tgt_out, align in zip(
            self.src.tensor_split(pieces),
            self.tgt_in.tensor_split(pieces),
            self.tgt_out.tensor_split(pieces),
            aligns,
        ):
            if src.size(0):
                out.append(Batch(src, tgt_in, tgt_out, int((tgt_out != PAD).sum()), align))
        return out

    def to(self, device: torch.device) -> Batch:
        return Batch(
            to_device(self.src, device),
            to_device(self.tgt_in, device),
            to_device(self.tgt_out, device),
            self.n_tokens,
            None if self.align is None else to_device(self.align, device),
        )

    def padded(self, multiple: int) -> Batch:
        """Lengths padded up to a multiple of `multiple` with PAD columns (masked and outside
        the loss), so a compiled model meets fewer distinct shapes."""

        def pad(t: torch.Tensor) -> torch.Tensor:
            extra = -t.size(1) % multiple
            return torch.nn.functional.pad(t, (0, extra), value=PAD) if extra else t

        align = self.align
        if align is not None:
            extra = (-align.size(2) % multiple, -align.size(1) % multiple)
            align = torch.nn.functional.pad(align, (0, extra[0], 0, extra[1]), value=False)
        return Batch(pad(self.src), pad(self.tgt_in), pad(self.tgt_out), self.n_tokens, align)

    def pin(self) -> Batch:
        return Batch(
            self.src.pin_memory(),
            self.tgt_in.pin_memory(),
            self.tgt_out.pin_memory(),
            self.n_tokens,
            None if self.align is None else self.align.pin_memory(),
        )


def pad_ids(seqs: list[list[int]], pad: int = PAD) -> torch.Tensor:
    width = max((len(s) for s in seqs), default=0)
    out = np.full((len(seqs), max(width, 1)), pad, dtype=np.int64)
    for i, s in enumerate(seqs):
        out[i, : len(s)] = s
    return torch.from_numpy(out)


def batch_of(src: list[list[int]], tgt: list[list[int]]) -> Batch:
    """Sources (ending in <eos>) and framed targets (<bos> .. <eos>) as one padded batch."""
    return Batch(
        src=pad_ids(src),
        tgt_in=pad_ids([t[:-1] for t in tgt]),
        tgt_out=pad_ids([t[1:] for t in tgt]),
        n_tokens=sum(len(t) - 1 for t in tgt),
    )


def gather(tokens: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> torch.Tensor:
    """Rows tokens[starts[i]:ends[i]] as one PAD-padded int64 tensor (at least 1 wide)."""
    lengths = ends - starts
    width = max(int(lengths.max(initial=0)), 1)
    cols = np.arange(width)
    mask = cols[None, :] < lengths[:, None]
    out = np.full((len(starts), width), PAD, dtype=np.int64)
    out[mask] = tokens[(starts[:, None] + cols[None, :])[mask]]
    return torch.from_numpy(out)


class PairIds:
    """Source ids (ending in <eos>) and framed target ids (<bos> .. <eos>) of many pairs,
    as flat token arrays with offsets: numpy arrays or memory maps of a prepared dataset."""

    # Whether each epoch cuts the pairs anew (data/subwords.py), so that a batch's lengths
    # are known only once its rows are drawn.
    redraws = False

    def __init__(self, src, src_offsets, tgt, tgt_offsets, cost=None, maps=()):
        self.maps = maps  # the npyfile.Mapped files behind the arrays, if any
        self.src, self.src_offsets = src, src_offsets
        self.tgt, self.tgt_offsets = tgt, tgt_offsets
        # The planning length of a pair: the decoder sees tgt_in/tgt_out, one shorter
        # than the framed target.
        if cost is None:
            cost = np.maximum(np.diff(src_offsets), np.diff(tgt_offsets) - 1)
        self.cost = cost

    @classmethod
    def from_lists(cls, src: list[list[int]], tgt: list[list[int]]) -> PairIds:
        assert len(src) == len(tgt)
        return cls(*flatten(src), *flatten(tgt))

    def __len__(self) -> int:
        return len(self.cost)

    def lengths(self, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(source length, framed target length) of the given rows."""
        rows = np.asarray(rows, dtype=np.int64)
        s, t = self.src_offsets, self.tgt_offsets
        return s[rows + 1] - s[rows], t[rows + 1] - t[rows]

    def release(self) -> None:
        """Drop the mapped pages read so far from the resident set (a long run touches
        every page of the corpus; the page cache keeps them for the next read)."""
        for m in self.maps:
            m.release()

    def within(self, limit: int, block: int = 1 << 20) -> np.ndarray | None:
        """The rows whose source and framed target are at most `limit` long, or None when
        all are (looked at a block at a time, so nothing corpus-sized is made for it)."""
        if len(self) == 0 or int(self.cost.max()) + 1 <= limit:
            return None
        keep = []
        for r0 in range(0, len(self), block):
            rows = np.arange(r0, min(r0 + block, len(self)))
            s, t = self.lengths(rows)
            keep.append(rows[(s <= limit) & (t <= limit)])
        return np.concatenate(keep)

    def draw(self, rows, key: tuple = ()) -> tuple[list[list[int]], list[list[int]]]:
        """The rows' ids as lists: sources with <eos>, targets <bos> .. <eos>; `key` is
        for those that draw a segmentation (data/subwords.py)."""
        src, tgt = [], []
        for r in np.asarray(rows, dtype=np.int64):
            src.append(self.src[self.src_offsets[r] : self.src_offsets[r + 1]].tolist())
            tgt.append(self.tgt[self.tgt_offsets[r] : self.tgt_offsets[r + 1]].tolist())
        return src, tgt

    def collate(self, rows, key: tuple = ()) -> Batch:
        """The rows as one padded batch; `key` names the batch (epoch, index) for those that
        draw something per batch (data/subwords.py)."""
        rows = np.asarray(rows, dtype=np.int64)
        s0, s1 = self.src_offsets[rows], self.src_offsets[rows + 1]
        t0, t1 = self.tgt_offsets[rows], self.tgt_offsets[rows + 1]
        return Batch(
            src=gather(self.src, s0, s1),
            tgt_in=gather(self.tgt, t0, t1 - 1),
            tgt_out=gather(self.tgt, t0 + 1, t1),
            n_tokens=int((t1 - t0 - 1).sum()),
        )


@dataclass
class EpochPlan:
    """One epoch's batches: batch k holds rows order[bounds[b]:bounds[b + 1]], b = perm[k]."""

    order: np.ndarray
    bounds: np.ndarray
    perm: np.ndarray

    def __len__(self) -> int:
        return len(self.perm)

    def rows(self, k: int) -> np.ndarray:
        b = self.perm[k]
        return self.order[self.bounds[b] : self.bounds[b + 1]]

    def shard(self, rank: int, world: int) -> EpochPlan:
        """Every world-th batch from `rank` on, the same count on every rank."""
        usable = len(self.perm) // world * world
        return EpochPlan(self.order, self.bounds, self.perm[rank:usable:world])


def plan_epoch(
    cost: np.ndarray, batch_tokens: int, seed: int, epoch: int, pool_batches: int = 64
) -> EpochPlan:
    """Shuffle, sort within pools of a few dozen batches' worth (low padding, but batches
    still differ from epoch to epoch), pack greedily up to the budget, shuffle the batches."""
    n = len(cost)
    rng = np.random.Generator(np.random.PCG64([seed % 2**63, epoch]))
    order = np.arange(n, dtype=np.int32 if n < 2**31 else np.int64)
    rng.shuffle(order)  # in place: no second corpus-sized array
    pool = max(1, pool_batches * batch_tokens // max(1, int(cost.mean()) if n else 1))
    starts = []
    for p0 in range(0, n, pool):
        chunk = order[p0 : p0 + pool]
        lengths = np.asarray(cost[chunk], dtype=np.int64)
        by_length = np.argsort(lengths, kind="stable")
        order[p0 : p0 + pool] = chunk[by_length]
        lengths = lengths[by_length]
        s, m = 0, len(lengths)
        while s < m:
            # The longest row is the last one added, so the cost of rows s..e-1 is
            # lengths[e-1] * (e - s): grows with e, so count how many stay within budget.
            most = min(max(1, batch_tokens // max(1, int(lengths[s]))), m - s)
            costs = lengths[s : s + most] * np.arange(1, most + 1)
            starts.append(p0 + s)
            s += max(1, int(np.count_nonzero(costs <= batch_tokens)))
    bounds = np.array([*starts, n], dtype=np.int64)
    return EpochPlan(order, bounds, rng.permutation(len(starts)))


class TokenBatches:
    """Epochs of length-bucketed batches over tokenized pairs (lists, or a PairIds)."""

    def __init__(
        self,
        src: list[list[int]] | PairIds,
        tgt: list[list[int]] | None,
        batch_tokens: int,
        seed: int,
        pool_batches: int = 64,
        rows: np.ndarray | None = None,
        draw=None,
    ):
        self.ids = src if isinstance(src, PairIds) else PairIds.from_lists(src, tgt)
        self.batch_tokens = batch_tokens
        self.seed = seed
        self.pool_batches = pool_batches
        self.rows = rows  # the pairs used (all when None), e.g. those within max_positions
        self.cost = self.ids.cost if rows is None else np.asarray(self.ids.cost[rows])
        # epoch -> the rows it holds, when epochs are drawn (several corpora by weight,
        # data/corpora.py) rather than every pair once
        self.draw = draw

    def __len__(self) -> int:
        return len(self.cost)

    def plan(self, epoch: int) -> EpochPlan:
        rows = self.rows if self.draw is None else self.draw(epoch)
        cost = self.cost if self.draw is None else np.asarray(self.ids.cost[rows])
        plan = plan_epoch(cost, self.batch_tokens, self.seed, epoch, self.pool_batches)
        if rows is not None:
            plan.order = rows[plan.order]
        return plan

    def epoch(self, epoch: int) -> list[list[int]]:
        """The list of batches (lists of pair indices) for one epoch (small data, tests)."""
        plan = self.plan(epoch)
        return [plan.rows(k).tolist() for k in range(len(plan))]

    def collate(self, indices, key: tuple = ()) -> Batch:
        return self.ids.collate(indices, key)

    def batches(self, plan: EpochPlan, epoch: int, start: int) -> Iterator[tuple[int, Batch]]:
        """(k, batch k) of the epoch for every k from `start` on."""
        if self.ids.redraws:
            yield from redrawn_batches(self.ids, plan, epoch, start)
            return
        for k in range(start, len(plan)):
            yield k, self.collate(plan.rows(k), (epoch, k))

    def padding_share(self, batches) -> float:
        """Fraction of padded source+target cells that are padding."""
        real = padded = 0
        for b in batches:
            s, t = self.ids.lengths(b)
            real += int(s.sum() + t.sum()) - len(b)
            padded += len(b) * (int(s.max()) + int(t.max()) - 1)
        return 1.0 - real / max(1, padded)

    def plan_padding_share(self, plan: EpochPlan, most: int = 1000) -> float:
        """padding_share of an epoch plan, estimated on its first `most` batches (a whole
        epoch of millions of pairs would take corpus-sized temporaries)."""
        return self.padding_share([plan.rows(k) for k in range(min(len(plan), most))])


REDRAW_POOL = 16  # planned batches whose rows are drawn together and cut again


def redrawn_batches(ids, plan: EpochPlan, epoch: int, start: int, pool: int = REDRAW_POOL):
    """(k, batch k) from `start` on, for ids whose every epoch draws new segmentations
    (data/subwords.py). Drawn lengths vary around the planned ones, so batches cut by the
    plan would carry much padding. Instead the rows of `pool` planned batches are drawn
    together (seeded by the pool's place), sorted by drawn length and cut again into as
    many batches: the planned batch of the i-th shortest rows gets the i-th shortest cut,
    of the same row count. Each batch is a function of (epoch, k), so resume stays exact."""
    for p0 in range(start - start % pool, len(plan), pool):
        ks = range(p0, min(p0 + pool, len(plan)))
        planned = [plan.rows(k) for k in ks]
        rows = np.concatenate(planned)
        src, tgt = ids.draw(rows, (epoch, p0 // pool))
        drawn = np.array([max(len(a), len(b) - 1) for a, b in zip(src, tgt)])
        by_length = np.argsort(drawn, kind="stable")
        shortest_first = np.argsort([int(ids.cost[r].max()) for r in planned], kind="stable")
        cuts, at = {}, 0
        for j in shortest_first:
            group = by_length[at : at + len(planned[j])]
            at += len(group)
            cuts[ks[j]] = batch_of([src[i] for i in group], [tgt[i] for i in group])
        for k in ks:
            if k >= start:
                yield k, cuts[k]
