"""Every search keeps each output token's log-probability (and the <eos>'s): the numbers
the full model gives them, teacher-forced, and whose sum is the hypothesis's score before
length normalisation."""

import pytest
import torch
from util import favour_eos, model_and_src

from translator.config import DecodeConfig
from translator.decode.beam import BeamStream
from translator.decode.rules import length_penalty
from translator.decode.sampling import Sampling
from translator.decode.search import decode
from translator.specials import BOS, EOS


def forced(model, src_row, tokens) -> list[float]:
    with torch.no_grad():
        logp = torch.log_softmax(model(src_row, torch.tensor([[BOS, *tokens]]))[0], -1)
    return [float(logp[t, tok]) for t, tok in enumerate([*tokens, EOS])]


def check(model, src, hyps, dc):
    for i, sentence in enumerate(hyps):
        for h in sentence:
            assert h.logprobs is not None and len(h.logprobs) == len(h.tokens) + 1
            assert h.logprobs == pytest.approx(forced(model, src[i : i + 1], h.tokens), abs=1e-4)
            length = torch.tensor(len(h.tokens) + 1)
            norm = float(length_penalty(length, dc.len_penalty, dc.len_norm))
            assert sum(h.logprobs) / norm == pytest.approx(h.score, abs=1e-4)


@pytest.mark.parametrize("how", ["greedy", "beam", "nbest", "sampled", "prefix", "phrases"])
def test_each_search_keeps_its_tokens_log_probabilities(how):
    model, src = model_and_src(2)
    favour_eos(model, 0.4)
    dc = DecodeConfig(beam=1 if how in ("greedy", "sampled") else 4, max_len_a=1.0, max_len_b=4)
    kwargs = {
        "nbest": {"nbest": 3},
        "sampled": {"sampling": Sampling(top_k=5, seed=3)},
        "prefix": {"prefixes": [[7, 8]] * src.size(0)},
        "phrases": {"phrases": [[[9]]] * src.size(0)},
    }.get(how, {})
    hyps = decode(model, src, dc, **kwargs)
    check(model, src, hyps, dc)


def test_sentences_joining_a_running_beam_keep_theirs():
    model, src = model_and_src(4)
    favour_eos(model, 0.3)
    dc = DecodeConfig(beam=3, max_len_a=1.0, max_len_b=5)
    stream = BeamStream(model, dc, capacity=2)
    stream.add(src, list(range(src.size(0))))
    done = {}
    with torch.no_grad():
        while len(stream):
            for owner, hyps in stream.step():
                done[owner] = hyps
    check(model, src, [done[i] for i in range(src.size(0))], dc)
