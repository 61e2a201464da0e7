"""translate --sampling: top-k and nucleus sampling over the search's loop, seeded."""

import pytest
import torch
from decoding import SAMPLING_DC as DC
from decoding import draws
from util import favour_eos, model_and_src, model_score, user_error

from translator.decode.sampling import Sampling, sampling_options
from translator.decode.search import greedy_search, sample_search
from translator.specials import BOS, EOS, PAD, UNK


def uncertain_model(seed=0):
    """A model whose next-token distributions are nearly flat."""
    model, src = model_and_src(seed)
    with torch.no_grad():
        model.generator.weight.data = model.generator.weight.data * 0.05
    return model, src


def texts(hyps):
    return [[tuple(h.tokens) for h in sent] for sent in hyps]


def test_the_same_seed_gives_the_same_samples_and_another_seed_others():
    model, src = uncertain_model()
    first = sample_search(model, src, DC, Sampling(top_p=1.0, seed=5), nbest=3)
    again = sample_search(model, src, DC, Sampling(top_p=1.0, seed=5), nbest=3)
    other = sample_search(model, src, DC, Sampling(top_p=1.0, seed=6), nbest=3)
    assert texts(first) == texts(again)
    assert texts(first) != texts(other)
    # nbest: K different draws per sentence, best score first
    assert all(len(sent) == 3 for sent in first)
    assert any(len(set(sent)) > 1 for sent in texts(first))
    for sent in first:
        assert [h.score for h in sent] == sorted((h.score for h in sent), reverse=True)
    # one random stream for the whole run: a second batch draws on from where the first ended
    sampler = Sampling(top_p=1.0, seed=5)
    sample_search(model, src, DC, sampler, nbest=3)
    assert texts(sample_search(model, src, DC, sampler, nbest=3)) != texts(first)


@pytest.mark.parametrize(
    "sampler", [Sampling(top_k=1, seed=1), Sampling(top_p=1.0, temperature=1e-4, seed=1)]
)
def test_top_k_one_and_a_temperature_near_zero_are_greedy_search(sampler):
    for seed in range(3):
        model, src = model_and_src(seed)
        favour_eos(model, 0.3 * seed)
        greedy, sampled = greedy_search(model, src, DC), sample_search(model, src, DC, sampler)
        assert texts(greedy) == texts(sampled)
        for g, s in zip(greedy, sampled):
            assert abs(g[0].score - s[0].score) < 1e-4


def test_a_sample_is_scored_by_its_log_probability_under_the_model():
    model, src = uncertain_model(4)
    favour_eos(model, 1.0)
    for i, sent in enumerate(sample_search(model, src, DC, Sampling(top_k=5, seed=3), nbest=2)):
        for h in sent:
            assert not {PAD, BOS, UNK} & set(h.tokens)
            assert abs(model_score(model, src[i : i + 1], h.tokens, 0.6) - h.score) < 1e-3


def test_top_k_and_top_p_keep_only_the_likeliest_tokens():
    probs = [0.05, 0.5, 0.3, 0.15]
    assert set(draws(Sampling(top_k=2, seed=0), probs)) == {1, 2}
    assert set(draws(Sampling(top_p=0.75, seed=0), probs)) == {1, 2}  # 0.5 + 0.3 reach 0.75
    assert set(draws(Sampling(top_p=0.81, seed=0), probs)) == {1, 2, 3}
    assert set(draws(Sampling(top_p=0.4, seed=0), probs)) == {1}
    assert set(draws(Sampling(top_p=1.0, seed=0), probs)) == {0, 1, 2, 3}
    # a high temperature flattens: the unlikely token comes up far more often
    cold = draws(Sampling(top_p=1.0, temperature=0.5, seed=0), probs, 2000).count(0)
    hot = draws(Sampling(top_p=1.0, temperature=3.0, seed=0), probs, 2000).count(0)
    assert hot > 3 * max(cold, 1)
    # masked tokens (-inf, e.g. <eos> forced at the length limit) are never drawn
    forced = torch.full((50, 4), float("-inf"))
    forced[:, EOS] = 0.0
    assert set(Sampling(top_k=3, seed=0).choose(forced).tolist()) == {EOS}


@pytest.mark.parametrize(
    "spec, temperature, beam, needle",
    [
        ("foo", None, None, "--sampling 'foo'"),
        ("topk:0", None, None, "--sampling 'topk:0'"),
        ("topk:2.5", None, None, "--sampling"),
        ("topp:1.5", None, None, "--sampling 'topp:1.5'"),
        ("topp:0", None, None, "--sampling"),
        ("topk:5", 0.0, None, "--temperature"),
        ("topk:5", -1.0, None, "--temperature"),
        ("topk:5", None, 4, "--beam 4"),
        (None, 0.7, None, "--temperature"),
    ],
)
def test_wrong_sampling_options_are_one_line_errors(spec, temperature, beam, needle):
    assert needle in user_error(sampling_options, spec, temperature, None, beam)


def test_sampling_options():
    assert sampling_options(None, None, None, 5) is None
    s = sampling_options("topp:0.9", 0.7, 3, 1)
    assert (s.top_k, s.top_p, s.temperature, s.seed) == (None, 0.9, 0.7, 3)
    assert sampling_options("topk:10", None, None, None).temperature == 1.0
