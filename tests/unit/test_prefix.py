"""Target prefixes (translate --prefix; decode/rules.py's TargetPrefixes): every search's
output begins with its sentence's prefix and goes on as the model would from there, scored
as a whole by the model; sentences with different prefixes share a batch or join a running
search; no prefix changes nothing."""

import pytest
import torch
from decoding import FAMILIES
from decoding import family_model as build
from decoding import prefixed_batch as batch
from util import model_score

from translator.config import DecodeConfig
from translator.decode.beam import BeamStream
from translator.decode.sampling import Sampling
from translator.decode.search import beam_search, greedy_search, sample_search
from translator.specials import BOS, EOS, PAD, UNK

DC = DecodeConfig(beam=3, max_len_a=1.0, max_len_b=4, len_penalty=0.6)


def alone(src, row):
    return src[row : row + 1, : int((src[row] != PAD).sum())]


@pytest.mark.parametrize("family", FAMILIES)
def test_greedy_goes_on_from_the_prefix_as_the_model_would(family):
    model = build(family)
    src, prefixes = batch()
    out = greedy_search(model, src, DC, prefixes=prefixes)
    for i, (hyps, prefix) in enumerate(zip(out, prefixes)):
        tokens = hyps[0].tokens
        assert tokens[: len(prefix)] == prefix
        with torch.no_grad():
            logits = model(alone(src, i), torch.tensor([[BOS, *tokens]]))[0]
        logits[:, [PAD, UNK, BOS]] = float("-inf")
        chosen = logits.argmax(-1).tolist()
        assert chosen[len(prefix) : len(tokens)] == tokens[len(prefix) :]  # forced decoding
        assert hyps[0].score == pytest.approx(
            model_score(model, alone(src, i), tokens, 0.6), abs=1e-4
        )


@pytest.mark.parametrize("family", FAMILIES)
def test_beam_hypotheses_begin_with_their_prefix_whatever_the_batch(family):
    model = build(family)
    src, prefixes = batch()
    together = beam_search(model, src, DC, nbest=3, prefixes=prefixes)
    for i, prefix in enumerate(prefixes):
        assert len(together[i]) == 3
        for h in together[i]:
            assert h.tokens[: len(prefix)] == prefix
            assert h.score == pytest.approx(
                model_score(model, alone(src, i), h.tokens, 0.6), abs=1e-3
            )
        one = beam_search(model, alone(src, i), DC, nbest=3, prefixes=[prefix])[0]
        assert [h.tokens for h in one] == [h.tokens for h in together[i]], (family, i)


def test_empty_prefixes_change_nothing():
    model = build("transformer")
    src, _ = batch()
    none = [[] for _ in range(src.size(0))]
    for search in (greedy_search, beam_search):
        plain, empty = search(model, src, DC), search(model, src, DC, prefixes=none)
        assert [h[0].tokens for h in plain] == [h[0].tokens for h in empty]
        assert [h[0].score for h in plain] == [h[0].score for h in empty]


def test_a_prefix_longer_than_the_length_limit_still_fits_whole():
    model = build("luong")
    src, _ = batch()
    long = [list(range(4, 20))] * src.size(0)  # 16 tokens; the limit of a 1-token source is 5
    for search in (greedy_search, beam_search):
        for hyps in search(model, src, DC, prefixes=long):
            assert hyps[0].tokens[:16] == long[0]


def test_sampled_outputs_keep_the_prefix():
    model = build("transformer")
    src, prefixes = batch()
    out = sample_search(model, src, DC, Sampling(top_k=5, seed=1), nbest=2, prefixes=prefixes)
    for hyps, prefix in zip(out, prefixes):
        assert all(h.tokens[: len(prefix)] == prefix for h in hyps)


@pytest.mark.parametrize("family", ["transformer", "luong"])
def test_prefixed_sentences_joining_a_running_search_get_their_own_hypotheses(family):
    model = build(family)
    src, prefixes = batch()
    stream = BeamStream(model, DC, capacity=3)
    got, step = {}, 0
    arrivals = {0: [0, 1], 2: [2, 3], 3: [4], 5: [5]}
    with torch.no_grad():
        while len(stream) or step <= max(arrivals):
            for i in arrivals.get(step, []):
                stream.add(alone(src, i), [i], [prefixes[i]])
            got.update(stream.step())
            step += 1
    for i, prefix in enumerate(prefixes):
        one = beam_search(model, alone(src, i), DC, nbest=3, prefixes=[prefix])[0]
        assert [h.tokens for h in got[i][:3]] == [h.tokens for h in one], (family, i)
        assert got[i][0].tokens[: len(prefix)] == prefix
        assert EOS not in got[i][0].tokens
