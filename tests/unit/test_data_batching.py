"""Tests for translator.data.batching: every pair once per epoch, batches within the token
budget, order a pure function of (seed, epoch), and correctly shifted, padded tensors."""

from __future__ import annotations

import random

import pytest
import torch

from translator.data.batching import Batch, TokenBatches, pad_ids
from translator.data.tokenizer import BOS, EOS, PAD


def make_data(
    n: int = 600, seed: int = 0, max_len: int = 40, oversized: int = 0, aligned: bool = False
):
    """Source ids ending in EOS and targets framed BOS ... EOS, with random lengths
    (with `aligned`, a target is about as long as its source, as in real translations)."""
    rng = random.Random(seed)
    src, tgt = [], []
    for k in range(n):
        longest = max_len * 8 if k < oversized else max_len
        s_len, t_len = rng.randint(1, longest), rng.randint(1, longest)
        if aligned:
            t_len = max(1, s_len + rng.randint(-2, 2))
        src.append([rng.randint(4, 99) for _ in range(s_len)] + [EOS])
        tgt.append([BOS] + [rng.randint(4, 99) for _ in range(t_len)] + [EOS])
    order = list(range(n))
    rng.shuffle(order)  # oversized pairs anywhere, not only at the front
    return [src[i] for i in order], [tgt[i] for i in order]


def cost(src, tgt, i: int) -> int:
    """The decoder sees tgt_in/tgt_out, one shorter than the framed target."""
    return max(len(src[i]), len(tgt[i]) - 1)


# -- epochs -----------------------------------------------------------------------------------


@pytest.mark.parametrize("batch_tokens", [1, 64, 500, 4096, 10**6])
@pytest.mark.parametrize("epoch", [0, 3])
def test_each_pair_appears_exactly_once_per_epoch(batch_tokens, epoch):
    src, tgt = make_data()
    batches = TokenBatches(src, tgt, batch_tokens, seed=1).epoch(epoch)
    flat = [i for b in batches for i in b]
    assert sorted(flat) == list(range(len(src)))
    assert all(b for b in batches)  # no empty batches


@pytest.mark.parametrize("batch_tokens", [1, 50, 300, 2048])
@pytest.mark.parametrize("oversized", [0, 25])
def test_batches_respect_the_token_budget(batch_tokens, oversized):
    src, tgt = make_data(oversized=oversized)
    tb = TokenBatches(src, tgt, batch_tokens, seed=5)
    for epoch in range(2):
        for b in tb.epoch(epoch):
            if len(b) == 1:  # a pair that alone exceeds the budget is allowed, alone
                continue
            longest = max(cost(src, tgt, i) for i in b)
            assert len(b) * longest <= batch_tokens, (len(b), longest)
            batch = tb.collate(b)  # the tensors the model gets are within the budget too
            assert (
                batch.src.shape[0] * max(batch.src.shape[1], batch.tgt_in.shape[1]) <= batch_tokens
            )


def test_oversized_pairs_get_a_batch_of_their_own():
    src, tgt = make_data(oversized=30)
    budget = 200
    big = {i for i in range(len(src)) if cost(src, tgt, i) > budget}
    assert big  # the data really holds pairs over the budget
    batches = TokenBatches(src, tgt, budget, seed=1).epoch(0)
    for b in batches:
        if big & set(b):
            assert len(b) == 1
    assert sorted(i for b in batches for i in b) == list(range(len(src)))


def test_batches_are_filled_not_singletons():
    src, tgt = make_data()
    budget = 2048
    batches = TokenBatches(src, tgt, budget, seed=1).epoch(0)
    longest = max(cost(src, tgt, i) for i in range(len(src)))
    # every pair fits more than once into the budget, so batching must group pairs
    assert budget // longest >= 2
    assert len(batches) < len(src) / 2


def test_same_seed_and_epoch_give_the_same_batches():
    src, tgt = make_data()
    a = TokenBatches(src, tgt, 700, seed=3)
    b = TokenBatches([list(s) for s in src], [list(t) for t in tgt], 700, seed=3)
    assert a.epoch(4) == b.epoch(4)
    assert a.epoch(4) == a.epoch(4)  # asking twice changes nothing
    assert a.epoch(0) == b.epoch(0)


def test_other_epoch_or_seed_gives_another_order():
    src, tgt = make_data()
    tb = TokenBatches(src, tgt, 700, seed=3)
    epochs = [tb.epoch(e) for e in range(4)]
    for i in range(len(epochs)):
        for j in range(i + 1, len(epochs)):
            assert epochs[i] != epochs[j], (i, j)
    assert TokenBatches(src, tgt, 700, seed=4).epoch(0) != epochs[0]


def test_epoch_order_does_not_depend_on_global_random_state():
    src, tgt = make_data()
    tb = TokenBatches(src, tgt, 700, seed=3)
    random.seed(1)
    torch.manual_seed(1)
    first = tb.epoch(2)
    random.seed(2)
    torch.manual_seed(2)
    random.random()
    assert tb.epoch(2) == first


def test_length_bucketing_lowers_padding():
    src, tgt = make_data(n=800, aligned=True)
    tb = TokenBatches(src, tgt, 1000, seed=1)
    batches = tb.epoch(0)
    # the same batch sizes filled in a random order instead of by length
    rng = random.Random(0)
    order = list(range(len(src)))
    rng.shuffle(order)
    unsorted, start = [], 0
    for b in batches:
        unsorted.append(order[start : start + len(b)])
        start += len(b)
    assert tb.padding_share(batches) < 0.5 * tb.padding_share(unsorted)


# -- collate ----------------------------------------------------------------------------------


def test_collate_by_hand():
    src = [[5, 6, 3], [7, 3]]
    tgt = [[BOS, 8, 9, 10, EOS], [BOS, 11, EOS]]
    batch = TokenBatches(src, tgt, 100, seed=0).collate([1, 0])
    assert isinstance(batch, Batch)
    assert batch.src.tolist() == [[7, 3, PAD], [5, 6, 3]]
    assert batch.tgt_in.tolist() == [[BOS, 11, PAD, PAD], [BOS, 8, 9, 10]]
    assert batch.tgt_out.tolist() == [[11, EOS, PAD, PAD], [8, 9, 10, EOS]]
    assert batch.n_tokens == 2 + 4
    assert batch.src.dtype == batch.tgt_in.dtype == batch.tgt_out.dtype == torch.int64


def test_collate_shifts_targets_and_pads_with_zero():
    src, tgt = make_data(n=300)
    tb = TokenBatches(src, tgt, 600, seed=2)
    for b in tb.epoch(0)[:20]:
        batch = tb.collate(b)
        rows = len(b)
        assert batch.src.shape[0] == batch.tgt_in.shape[0] == batch.tgt_out.shape[0] == rows
        assert batch.tgt_in.shape == batch.tgt_out.shape
        assert batch.src.shape[1] == max(len(src[i]) for i in b)
        assert batch.tgt_in.shape[1] == max(len(tgt[i]) - 1 for i in b)
        assert (batch.tgt_in[:, 0] == BOS).all()
        for row, i in enumerate(b):
            n_src, n_tgt = len(src[i]), len(tgt[i]) - 1
            assert batch.src[row, :n_src].tolist() == src[i]
            assert (batch.src[row, n_src:] == PAD).all()
            assert batch.tgt_in[row, :n_tgt].tolist() == tgt[i][:-1]
            # tgt_out is tgt_in shifted left by one, ending in EOS
            assert batch.tgt_out[row, : n_tgt - 1].tolist() == batch.tgt_in[row, 1:n_tgt].tolist()
            assert batch.tgt_out[row, n_tgt - 1] == EOS
            assert (batch.tgt_in[row, n_tgt:] == PAD).all()
            assert (batch.tgt_out[row, n_tgt:] == PAD).all()
        assert batch.n_tokens == int((batch.tgt_out != PAD).sum())
        assert batch.n_tokens == sum(len(tgt[i]) - 1 for i in b)


def test_batch_to_device_keeps_values():
    src, tgt = make_data(n=10)
    batch = TokenBatches(src, tgt, 10**4, seed=0).collate(list(range(10)))
    moved = batch.to(torch.device("cpu"))
    assert torch.equal(moved.src, batch.src) and torch.equal(moved.tgt_out, batch.tgt_out)
    assert torch.equal(moved.tgt_in, batch.tgt_in) and moved.n_tokens == batch.n_tokens


# -- padding_share ----------------------------------------------------------------------------


def test_padding_share_is_a_fraction_matching_the_tensors():
    src, tgt = make_data(n=400)
    tb = TokenBatches(src, tgt, 800, seed=1)
    batches = tb.epoch(0)
    share = tb.padding_share(batches)
    assert 0.0 < share < 1.0
    # the same quantity measured on the padded tensors (real ids are never PAD)
    real = cells = 0
    for b in batches:
        batch = tb.collate(b)
        real += int((batch.src != PAD).sum() + (batch.tgt_out != PAD).sum())
        cells += batch.src.numel() + batch.tgt_out.numel()
    assert share == pytest.approx(1 - real / cells)


def test_padding_share_is_zero_when_all_lengths_are_equal():
    rng = random.Random(0)
    src = [[rng.randint(4, 50) for _ in range(6)] + [EOS] for _ in range(100)]
    tgt = [[BOS] + [rng.randint(4, 50) for _ in range(9)] + [EOS] for _ in range(100)]
    tb = TokenBatches(src, tgt, 64, seed=0)
    assert tb.padding_share(tb.epoch(0)) == 0.0
    assert tb.padding_share([list(range(100))]) == 0.0


def test_padding_share_of_one_long_and_one_short_pair():
    src = [[4] * 9 + [EOS], [4, EOS]]  # lengths 10 and 2
    tgt = [[BOS, 5, EOS], [BOS, 5, EOS]]  # decoder length 2 both
    tb = TokenBatches(src, tgt, 100, seed=0)
    # 2 rows x (10 + 2) cells, of which 10 + 2 + 2 + 2 are real
    assert tb.padding_share([[0, 1]]) == pytest.approx(1 - 16 / 24)
    assert tb.padding_share([[0], [1]]) == 0.0


# -- pad_ids ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "seqs, shape",
    [
        ([[1, 2, 3], [4]], (2, 3)),
        ([[7]], (1, 1)),
        ([[5, 6], [], [8, 9, 10, 11]], (3, 4)),
        ([[], []], (2, 1)),
        ([], (0, 1)),
    ],
)
def test_pad_ids_shapes(seqs, shape):
    out = pad_ids(seqs)
    assert tuple(out.shape) == shape
    assert out.dtype == torch.int64
    for row, s in enumerate(seqs):
        assert out[row, : len(s)].tolist() == s
        assert (out[row, len(s) :] == PAD).all()


def test_pad_ids_custom_pad_value():
    out = pad_ids([[1, 2, 3], [4]], pad=-1)
    assert out.tolist() == [[1, 2, 3], [4, -1, -1]]


def test_padded_batch_has_lengths_in_multiples_and_the_same_rows():
    src = [[5, 6, 3], [7, 3]]
    tgt = [[BOS, 8, 9, 10, EOS], [BOS, 11, EOS]]
    batch = TokenBatches(src, tgt, 100, seed=0).collate([0, 1])
    padded = batch.padded(8)
    assert padded.src.shape == (2, 8) and padded.tgt_in.shape == padded.tgt_out.shape == (2, 8)
    assert torch.equal(padded.src[:, :3], batch.src) and (padded.src[:, 3:] == PAD).all()
    assert (
        torch.equal(padded.tgt_out[:, :4], batch.tgt_out) and (padded.tgt_out[:, 4:] == PAD).all()
    )
    assert padded.n_tokens == batch.n_tokens
    assert batch.padded(4).src.shape == (2, 4) and batch.padded(1).src.shape == (2, 3)
