"""BeamStream (translator/decode/beam.py): sentences that join a running search, into new rows
(merge_states) or into the rows of sentences that ended (place_states), get the hypotheses
that a search of each sentence alone gives."""

import pytest
import torch
from util import favour_eos, tiny_model

from translator.config import DecodeConfig
from translator.decode.beam import BeamStream
from translator.decode.search import beam_search
from translator.models.transformer import one_query

FAMILIES = ["transformer", "lstm", "bahdanau", "luong", "transformer+luong"]


def sources(n: int, seed: int) -> list[torch.Tensor]:
    g = torch.Generator().manual_seed(seed)
    lengths = torch.randint(1, 10, (n,), generator=g).tolist()
    return [torch.randint(4, 30, (length,), generator=g) for length in lengths]


def build(family: str):
    from translator.models.ensemble import Ensemble

    torch.manual_seed(7)
    members = [tiny_model(name) for name in family.split("+")]
    favour_eos(members[0], 0.3)
    return members[0] if len(members) == 1 else Ensemble(members)


@pytest.mark.parametrize("family", FAMILIES)
@pytest.mark.parametrize("regroup", [1, 4])
def test_sentences_joining_mid_search_get_their_own_hypotheses(family, regroup):
    model = build(family)
    dc = DecodeConfig(beam=3, max_len_a=1.0, max_len_b=4)
    srcs = sources(14, seed=len(family) + regroup)
    stream = BeamStream(model, dc, capacity=5, regroup=regroup)
    got: dict[int, list] = {}
    arrivals = {0: [0, 1], 1: [2], 3: [3, 4, 5, 6], 4: [7], 6: [8, 9, 10], 9: [11, 12, 13]}
    placed = merged = 0
    real_place, real_merge = model.place_states, model.merge_states

    def place(*args):
        nonlocal placed
        placed += 1
        return real_place(*args)

    def merge(*args):
        nonlocal merged
        merged += 1
        return real_merge(*args)

    model.place_states, model.merge_states = place, merge
    step = 0
    with torch.no_grad():
        while len(stream) or step <= max(arrivals):
            for i in arrivals.get(step, []):
                stream.add(srcs[i][None], [i])
            for i, hyps in stream.step():
                assert i not in got
                got[i] = hyps
            step += 1
    assert sorted(got) == list(range(len(srcs)))
    assert placed and merged  # both ways of joining were taken
    for i, src in enumerate(srcs):
        alone = beam_search(model, src[None], dc, nbest=3)[0]
        assert [h.tokens for h in got[i][:3]] == [h.tokens for h in alone], (family, i)
        assert [h.score for h in got[i][:3]] == pytest.approx([h.score for h in alone], abs=1e-4)


@pytest.mark.parametrize("family", FAMILIES)
def test_sentences_join_under_bf16_autocast(family):
    """A fresh state (the encoder's dtype) and one that has stepped (autocast's) may differ
    in dtype; rows of either kind take each other's places."""
    model = build(family)
    dc = DecodeConfig(beam=3, max_len_a=1.0, max_len_b=4)
    srcs = sources(8, seed=3)
    stream = BeamStream(model, dc, capacity=3, regroup=1)
    got, step = {}, 0
    with torch.no_grad(), torch.autocast("cpu", dtype=torch.bfloat16):
        while len(stream) or step < len(srcs):
            if step < len(srcs):
                stream.add(srcs[step][None], [step])
            got.update(stream.step())
            step += 1
        for i, src in enumerate(srcs):
            alone = beam_search(model, src[None], dc, nbest=3)[0]
            assert [h.tokens for h in got[i][:3]] == [h.tokens for h in alone], (family, i)


def test_cancelled_sentences_leave_and_others_go_on():
    model = build("transformer")
    dc = DecodeConfig(beam=2, max_len_a=2.0, max_len_b=6)
    srcs = sources(6, seed=5)
    gone = {1, 4}
    stream = BeamStream(model, dc, capacity=3, cancelled=lambda i: i in gone, regroup=2)
    for i, src in enumerate(srcs):
        stream.add(src[None], [i])
    ended = []
    with torch.no_grad():
        while len(stream):
            ended += [i for i, _ in stream.step()]
    # 4 never started (cancelled while queued); 1 may end at once, as cancelled
    assert sorted(set(ended) - gone) == [0, 2, 3, 5] and 4 not in ended


def test_one_query_attention_equals_the_fused_kernel():
    g = torch.Generator().manual_seed(0)
    q, k, v = (torch.randn(6, 2, n, 8, generator=g) for n in (1, 11, 11))
    mask = torch.rand(6, 1, 1, 11, generator=g) > 0.4
    mask[..., -1] = True
    for m in (None, mask):
        want = torch.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=m)
        assert torch.allclose(one_query(q, k, v, m), want, atol=1e-5)


def test_continuous_batching_is_chosen_only_for_models_that_declare_it():
    from util import user_error

    from translator.config import Config
    from translator.decode.sampling import Sampling
    from translator.decode.translator import Translator
    from translator.serve.limits import Limits
    from translator.serve.streaming import StreamBatcher, make_batcher

    continuous = Limits(batching="continuous")
    model = build("luong")
    translator = Translator(model, None, Config(), device=torch.device("cpu"))
    assert type(make_batcher(translator, continuous)) is StreamBatcher
    with pytest.raises(AttributeError, match="not changed once built"):  # per call: a request
        translator.sampling = Sampling(top_k=3, seed=1)
    transformer = build("transformer")
    transformer.use_cache = False  # the uncached step cannot take sentences mid-search
    translator = Translator(transformer, None, Config(), device=torch.device("cpu"))
    assert "--batching batch" in user_error(make_batcher, translator, continuous)
    assert type(make_batcher(translator, Limits())) is not StreamBatcher
    with pytest.raises(ValueError, match="StreamingStates"):
        BeamStream(transformer, DecodeConfig(), capacity=4)
