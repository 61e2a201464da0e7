"""Several corpora as one (data/corpora.py): the weighted epoch draw, tags put before the
sources of their corpus, searches that never output a tag, and the config's checks."""

import numpy as np
import pytest
import torch
from util import pair_ids as corpus
from util import tiny_model, user_error

from translator.config import DecodeConfig, config_from_dict
from translator.data.batching import TokenBatches
from translator.data.corpora import MixedIds, WeightedDraw
from translator.decode.search import beam_search, greedy_search
from translator.specials import EOS, PAD

TAG = 9


def mixed(sizes=(200, 30), prefixes=((), (TAG,))) -> MixedIds:
    return MixedIds([corpus(n, 1000 * (c + 1)) for c, n in enumerate(sizes)], list(prefixes))


@pytest.mark.parametrize("weights", [(1, 1), (1, 3), (5, 1), (0.2, 0.8)])
def test_each_epoch_holds_the_corpora_in_the_shares_of_their_weights(weights):
    ids = mixed()
    draw = WeightedDraw(ids, list(weights), seed=4)
    rows = draw(0)
    assert len(rows) == len(ids)  # an epoch is as long as all corpora together
    share = np.mean(rows >= 200)  # rows of the second corpus
    assert share == pytest.approx(weights[1] / sum(weights), abs=0.02)
    # every row of a corpus is seen as often as its quota allows: whole repeats, then a part
    counts = np.bincount(rows[rows >= 200] - 200, minlength=30)
    assert counts.max() - counts.min() <= 1


def test_the_draw_is_a_function_of_seed_and_epoch():
    ids = mixed()
    a, b = WeightedDraw(ids, [1, 1], seed=4), WeightedDraw(ids, [1, 1], seed=4)
    assert np.array_equal(a(3), b(3))
    assert not np.array_equal(a(3), a(4))
    assert not np.array_equal(a(3), WeightedDraw(ids, [1, 1], seed=5)(3))
    batches = TokenBatches(ids, None, 60, seed=4, draw=a)
    assert batches.epoch(2) == TokenBatches(ids, None, 60, seed=4, draw=b).epoch(2)
    assert sorted(r for batch in batches.epoch(2) for r in batch) == sorted(a(2).tolist())


def test_a_draw_only_takes_allowed_rows():
    ids = mixed()
    allowed = np.arange(0, len(ids), 2)
    rows = WeightedDraw(ids, [1, 1], seed=1, allowed=allowed)(0)
    assert len(rows) == len(allowed) and np.all(rows % 2 == 0)
    message = user_error(WeightedDraw, ids, [1, 1], 1, np.arange(10))
    assert "data.corpora[1]" in message and "max_positions" in message


def test_a_tagged_corpus_gets_its_tag_first_in_every_source():
    ids = mixed()
    rows = [0, 201, 5, 229]
    batch = ids.collate(rows)
    firsts = batch.src[:, 0].tolist()
    assert sorted(firsts) == sorted([1000, 1005, TAG, TAG])  # the first corpus's rows 0 and 5
    for row in batch.src.tolist():
        real = [t for t in row if t != PAD]
        assert real[-1] == EOS
        if real[0] == TAG:
            assert 2000 <= real[1] < 2030  # the second corpus's own first id follows the tag
    assert batch.n_tokens == int((batch.tgt_out != PAD).sum())
    src_len, _ = ids.lengths(np.array(rows))
    assert src_len.tolist() == [3, 4, 3, 4]  # the tag counts
    assert ids.cost[201] == 4 and ids.cost[0] == 3


def test_searches_never_output_a_tag_even_where_the_model_favours_it():
    torch.manual_seed(0)
    model = tiny_model("transformer")
    real_step = model.step

    def step(prev, state):  # the tag is the likeliest token everywhere
        logits, state = real_step(prev, state)
        logits = logits.clone()
        logits[:, TAG] += 100.0
        return logits, state

    model.step = step
    src = torch.tensor([[5, 6, 7, EOS], [8, 9, EOS, PAD]])
    dc = DecodeConfig(beam=3, max_len_a=1.0, max_len_b=3)
    with torch.no_grad():
        before = greedy_search(model, src, dc)
    assert any(TAG in h[0].tokens for h in before)
    model.never_output = (TAG,)
    with torch.no_grad():
        found = [*greedy_search(model, src, dc), *beam_search(model, src, dc, nbest=3)]
    assert all(TAG not in h.tokens for hyps in found for h in hyps)


def entry(**keys):
    return {"train": {"src": "a.de", "tgt": "a.en"}, **keys}


@pytest.mark.parametrize(
    "data, needle",
    [
        ({"corpora": [entry(weight=0)]}, "data.corpora[0].weight"),
        ({"corpora": [entry(), entry(weight=-1)]}, "data.corpora[1].weight"),
        ({"corpora": []}, "data.corpora' lists none"),
        ({"corpora": [entry()], "train": {"src": "b.de", "tgt": "b.en"}}, "both give training"),
        ({"corpora": [entry(dir="x")]}, "exactly one of train, dir or dataset, got train, dir"),
        ({"corpora": [{"weight": 2}]}, "got none"),
        ({"corpora": [entry(tag="<bt>"), entry(tag="<bt>x")]}, "collide"),
        ({"corpora": [entry(tag="</s>")]}, "special piece"),
        ({"corpora": [entry(tag="b t")]}, "one word"),
        ({"corpora": [entry(train="corpus.txt")]}, "data.corpora[0].train"),
        ({"corpora": [entry(wieght=2)]}, "did you mean 'data.corpora[0].weight'"),
    ],
)
def test_impossible_corpora_are_one_line_errors(data, needle):
    message = user_error(config_from_dict, {"data": data})
    assert needle in message, message


def test_tags_are_listed_once_in_order():
    cfg = config_from_dict(
        {"data": {"corpora": [entry(tag="<bt>"), entry(), entry(tag="<ft>"), entry(tag="<bt>")]}}
    )
    assert cfg.data.tags == ["<bt>", "<ft>"]
    assert config_from_dict({}).data.tags == []


def test_corpora_without_a_dev_split_are_refused_not_given_the_demos(tmp_path):
    """The built-in demo fills in no dev or test split for corpora of one's own, as for
    data.train, unless the config names it (data.dataset: demo); a folder fills them in."""
    from translator.data.corpora import open_corpus

    (tmp_path / "a.de").write_text("Ein Hund.\n")
    (tmp_path / "a.en").write_text("A dog.\n")
    corpus = {"train": {"src": str(tmp_path / "a.de"), "tgt": str(tmp_path / "a.en")}}
    cfg = config_from_dict({"data": {"corpora": [corpus]}})
    source = open_corpus(cfg.data.corpora[0], cfg.data, 1, "data.corpora[0]")
    assert user_error(lambda: list(source.pairs("dev"))).startswith("data.dev is not set")
    named = config_from_dict({"data": {"corpora": [corpus], "dataset": "demo", "demo_dev": 3}})
    assert (
        len(list(open_corpus(named.data.corpora[0], named.data, 1, "data.corpora[0]").pairs("dev")))
        == 3
    )


def test_a_missing_corpus_file_is_named_by_its_entry_before_any_work(tmp_path):
    from translator.data.corpora import training_sources

    for name in ("a.de", "a.en", "b.de"):
        (tmp_path / name).write_text("x\n")
    files = [{"src": str(tmp_path / f"{c}.de"), "tgt": str(tmp_path / f"{c}.en")} for c in "ab"]
    cfg = config_from_dict({"data": {"corpora": [{"train": f} for f in files],
                                     "dev": files[0]}})  # fmt: skip
    message = user_error(training_sources, cfg)
    assert message == f"data.corpora[1].train.tgt: file not found: {tmp_path / 'b.en'}"
    (tmp_path / "b.en").mkdir()
    message = user_error(training_sources, cfg)
    assert message == f"data.corpora[1].train.tgt: {tmp_path / 'b.en'} is a folder; give a file"
