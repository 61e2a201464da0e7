"""Subword regularization (data/subwords.py): each training batch gets a segmentation drawn
from the same text, seeded by its name, within the length limit; BPE models drop merges."""

import pytest

from translator.config import TokenizerConfig
from translator.data.batching import PairIds, TokenBatches
from translator.data.demo import demo_splits
from translator.data.subwords import SampledIds
from translator.data.tokenizer import Tokenizer
from translator.specials import BOS, EOS, PAD

PAIRS = demo_splits(400, 1, 1, seed=2)["train"]


@pytest.fixture(scope="module", params=["unigram", "bpe"])
def tokenizer(request):
    return Tokenizer.train(PAIRS, TokenizerConfig(vocab_size=500, model_type=request.param), 1)


def prepared(tokenizer) -> PairIds:
    src = tokenizer.encode_src([s for s, _ in PAIRS])
    tgt = tokenizer.encode_tgt([t for _, t in PAIRS])
    return PairIds.from_lists(src, tgt)


def rows_of(batch):
    return [[t for t in row if t != PAD] for row in batch.tolist()]


def test_each_batch_draws_a_segmentation_of_the_same_text(tokenizer):
    best = prepared(tokenizer)
    drawn = SampledIds(best, tokenizer, 0.3, seed=1, limit=1024)
    rows = list(range(40))
    a, b = drawn.collate(rows, (0, 5)), drawn.collate(rows, (0, 5))
    assert a.src.equal(b.src) and a.tgt_out.equal(b.tgt_out)  # the same batch, the same draw
    c = drawn.collate(rows, (1, 5))
    assert not a.src.equal(c.src) or not a.tgt_out.equal(c.tgt_out)  # another epoch: another
    plain = best.collate(rows)
    assert rows_of(a.src) != rows_of(plain.src)  # not the prepared segmentation
    for side, sp in (("src", tokenizer.src), ("tgt_out", tokenizer.tgt)):
        texts = [sp.decode([i for i in r if i > EOS]) for r in rows_of(getattr(a, side))]
        want = [sp.decode([i for i in r if i > EOS]) for r in rows_of(getattr(plain, side))]
        assert texts == want
    assert all(r[-1] == EOS for r in rows_of(a.src)) and all(r[0] == BOS for r in rows_of(a.tgt_in))
    assert a.n_tokens == int((a.tgt_out != PAD).sum())
    assert drawn.growth > 1.0
    assert (drawn.cost >= best.cost).all() and drawn.cost.sum() > best.cost.sum()


def test_a_draw_over_the_length_limit_keeps_the_best_segmentation(tokenizer):
    best = prepared(tokenizer)
    limit = int(max(max(side) for side in best.lengths(range(len(best)))))  # the longest fits
    drawn = SampledIds(best, tokenizer, 0.05, seed=1, limit=limit)
    batch = drawn.collate(list(range(len(best))), (0, 0))
    assert batch.src.size(1) <= limit and batch.tgt_in.size(1) + 1 <= limit


def padding(batches) -> float:
    cells = sum(b.src.numel() + b.tgt_out.numel() for b in batches)
    real = sum(int((b.src != PAD).sum() + (b.tgt_out != PAD).sum()) for b in batches)
    return 1 - real / cells


def test_rows_drawn_together_are_cut_again_by_drawn_length(tokenizer):
    best = prepared(tokenizer)
    drawn = SampledIds(best, tokenizer, 0.1, seed=1, limit=1024)
    batches = TokenBatches(drawn, None, 300, seed=1)
    plan = batches.plan(0)
    cut = dict(batches.batches(plan, 0, 0))
    assert sorted(cut) == list(range(len(plan)))
    # each planned batch keeps its row count, and the epoch holds every pair once
    assert all(cut[k].src.size(0) == len(plan.rows(k)) for k in cut)
    texts = sorted(
        tokenizer.tgt.decode([i for i in row if i > EOS])
        for b in cut.values() for row in rows_of(b.tgt_out)
    )  # fmt: skip
    assert texts == sorted(t for _, t in PAIRS)
    # padding close to that of the best segmentation's batches, unlike batches drawn one
    # by one from the plan's rows; pooled over epochs, as one epoch's draw varies (a BPE
    # model's draws do not follow the seed from one process to the next)
    plain = TokenBatches(best, None, 300, seed=1)
    pooled = {"cut": [], "one_by_one": [], "unsampled": []}
    for epoch in range(4):
        planned = batches.plan(epoch)
        pooled["cut"] += [b for _, b in batches.batches(planned, epoch, 0)]
        pooled["one_by_one"] += [
            drawn.collate(planned.rows(k), (epoch, k)) for k in range(len(planned))
        ]
        pooled["unsampled"] += [plain.collate(rows) for rows in plain.epoch(epoch)]
    cut_pad, one_pad, best_pad = (padding(pooled[k]) for k in pooled)
    assert cut_pad - best_pad < 0.75 * (one_pad - best_pad)
    # a resumed epoch gives the same batches from its position on
    resumed = dict(batches.batches(plan, 0, 21))
    assert sorted(resumed) == list(range(21, len(plan)))
    assert all(resumed[k].src.equal(cut[k].src) for k in resumed)
    assert all(resumed[k].tgt_in.equal(cut[k].tgt_in) for k in resumed)
