"""--ensemble: several models decoding as one through the shared interface."""

import copy

import pytest
import torch
from decoding import SEARCHES
from util import favour_eos, model_and_src, model_score, tiny_model

from translator.config import DecodeConfig
from translator.decode.search import beam_search
from translator.models.ensemble import Ensemble


def same_output(a, b):
    assert [[h.tokens for h in hyps] for hyps in a] == [[h.tokens for h in hyps] for hyps in b]
    for ha, hb in zip(a, b):
        for x, y in zip(ha, hb):
            assert abs(x.score - y.score) < 1e-4


@pytest.mark.parametrize("search", SEARCHES)
def test_an_ensemble_of_one_model_or_of_copies_decodes_as_that_model(search):
    model, src = model_and_src(2)
    favour_eos(model, 0.4)
    alone = SEARCHES[search](model, src)
    assert sum(len(h.tokens) for hyps in alone for h in hyps) > len(alone)
    same_output(SEARCHES[search](Ensemble([model]), src), alone)
    same_output(SEARCHES[search](Ensemble([model, copy.deepcopy(model)]), src), alone)


def test_a_mixed_ensemble_steps_with_the_mean_log_probability_and_scores_by_it():
    torch.manual_seed(1)
    members = [tiny_model("transformer"), tiny_model("luong"), tiny_model("lstm")]
    favour_eos(members[1], 0.5)
    ensemble = Ensemble(members)
    _, src = model_and_src(3)
    prev = torch.full((src.size(0),), 2)
    logp, _ = ensemble.step(prev, ensemble.init_state(ensemble.encode(src)))
    each = [torch.log_softmax(m.step(prev, m.init_state(m.encode(src)))[0], -1) for m in members]
    mean = torch.stack(each).mean(0)
    assert torch.allclose(logp, mean - mean.logsumexp(-1, keepdim=True), atol=1e-5)
    assert not torch.allclose(logp, each[0], atol=1e-3)  # the other members count
    # Beam search moves every member's state along with the beams: each hypothesis's score is
    # its teacher-forced log-probability under the ensemble.
    dc = DecodeConfig(beam=3, max_len_a=1.0, max_len_b=4, len_penalty=0.6)
    hyps = beam_search(ensemble, src, dc, nbest=3)
    assert all(len(h) == 3 for h in hyps)
    for i, sent in enumerate(hyps):
        for h in sent:
            assert abs(model_score(ensemble, src[i : i + 1], h.tokens, 0.6) - h.score) < 1e-3


def test_ensemble_attention_is_the_mean_of_the_members_with_attention():
    torch.manual_seed(2)
    members = [tiny_model("transformer"), tiny_model("lstm"), tiny_model("bahdanau")]
    ensemble = Ensemble(members)
    assert ensemble.attention_layers == 1  # the layers every member with attention has
    _, src = model_and_src(4)
    prev = torch.full((src.size(0),), 2)
    state = ensemble.init_state(ensemble.encode(src))
    logp, after, weights = ensemble.step_attention(prev, state, -1)
    seen = [
        m.step_attention(prev, s, -1)[2]
        for m, s in zip(members, state["members"])
        if m is not members[1]
    ]
    assert torch.allclose(weights, (seen[0] + seen[1]) / 2)
    assert torch.allclose(weights.sum(-1), torch.ones(src.size(0)), atol=1e-5)
    plain, state = ensemble.step(prev, state)
    assert torch.equal(logp, plain) and after.keys() == state.keys() == {"members"}
    assert Ensemble([tiny_model("lstm")]).attention_layers == 0


def test_an_ensemble_streams_where_every_member_does():
    torch.manual_seed(3)
    members = [tiny_model("transformer"), tiny_model("luong")]
    assert Ensemble(members).supports_streaming
    members[0].use_cache = False  # the uncached Transformer step cannot merge rows
    assert not Ensemble(members).supports_streaming


# -- checkpoints through the command line ----------------------------------------------------
