import pytest
import torch
from util import favour_eos, model_and_src, model_score, tiny_model

from translator.config import DecodeConfig
from translator.decode.rules import length_penalty, max_lengths
from translator.decode.search import beam_search, greedy_search
from translator.specials import BOS, EOS, PAD, UNK


def test_beam_one_equals_greedy():
    for seed in range(3):
        model, src = model_and_src(seed)
        favour_eos(model, 0.3 * seed)
        dc = DecodeConfig(beam=1, max_len_a=1.2, max_len_b=4, len_penalty=0.6)
        g, b = greedy_search(model, src, dc), beam_search(model, src, dc)  # one settings object
        assert [h[0].tokens for h in g] == [h[0].tokens for h in b]
        for hg, hb in zip(g, b):
            assert abs(hg[0].score - hb[0].score) < 1e-4


def test_max_length_is_respected():
    model, src = model_and_src()
    limits = max_lengths(src, 0.5, 2)
    for hyp, limit in zip(
        greedy_search(model, src, DecodeConfig(max_len_a=0.5, max_len_b=2)), limits.tolist()
    ):
        assert len(hyp[0].tokens) <= limit
    for hyp, limit in zip(
        beam_search(model, src, DecodeConfig(beam=4, max_len_a=0.5, max_len_b=2)), limits
    ):
        assert len(hyp[0].tokens) <= limit


def test_nbest_sorted_and_counted():
    model, src = model_and_src(1)
    favour_eos(model, 0.5)
    out = beam_search(model, src, DecodeConfig(beam=5, max_len_a=1.0, max_len_b=5), nbest=3)
    assert len(out) == src.size(0)
    for hyps in out:
        assert len(hyps) == 3
        scores = [h.score for h in hyps]
        assert scores == sorted(scores, reverse=True)
        assert len({tuple(h.tokens) for h in hyps}) == 3


def test_length_penalty_formula():
    lp = length_penalty(torch.tensor([1, 7]), 1.0)
    assert torch.allclose(lp, torch.tensor([1.0, 2.0]))
    assert torch.allclose(length_penalty(torch.tensor([10]), 0.0), torch.tensor([1.0]))


def test_greedy_tokens_are_the_teacher_forced_argmax():
    """Each greedy token is the full model's argmax given the tokens before it."""
    model, src = model_and_src(3)
    favour_eos(model, 0.2)
    hyps = greedy_search(model, src, DecodeConfig(max_len_a=1.5, max_len_b=6))
    limits = max_lengths(src, 1.5, 6).tolist()
    for i, hyp in enumerate(hyps):
        tokens = hyp[0].tokens
        prefix = torch.tensor([[2] + tokens])
        logits = model(src[i : i + 1], prefix)[0]
        logits[:, [PAD, UNK, BOS]] = float("-inf")  # never chosen by search
        expected = logits.argmax(-1).tolist()
        assert expected[: len(tokens)] == tokens
        if len(tokens) < limits[i]:  # stopped before its length limit: it chose <eos>
            assert expected[len(tokens)] == EOS


def test_beam_search_hypothesis_scores_match_the_model():
    """A beam hypothesis's score is its log-probability under the full model, normalised."""
    model, src = model_and_src(4)
    favour_eos(model, 0.4)
    for i, hyps in enumerate(
        beam_search(
            model, src, DecodeConfig(beam=3, max_len_a=1.0, max_len_b=4, len_penalty=0.6), nbest=3
        )
    ):
        for h in hyps:
            assert abs(model_score(model, src[i : i + 1], h.tokens, 0.6) - h.score) < 1e-3


def test_hypotheses_cut_at_the_length_limit_are_scored_with_eos():
    """At the limit <eos> is forced and its probability counts, in greedy and beam search."""
    model, src = model_and_src(6)
    favour_eos(model, -2.0)  # outputs that run on
    limits = max_lengths(src, 0.0, 3).tolist()
    greedy = greedy_search(model, src, DecodeConfig(max_len_a=0.0, max_len_b=3, len_penalty=0.6))
    beam = beam_search(
        model, src, DecodeConfig(beam=3, max_len_a=0.0, max_len_b=3, len_penalty=0.6), nbest=3
    )
    cut = 0
    for i in range(src.size(0)):
        for h in greedy[i] + beam[i]:
            assert len(h.tokens) <= limits[i]
            cut += len(h.tokens) == limits[i]
            assert abs(model_score(model, src[i : i + 1], h.tokens, 0.6) - h.score) < 1e-3
    assert cut > src.size(0)  # the check covers cut hypotheses


@pytest.mark.parametrize(
    "family", ["transformer", "lstm", "bahdanau", "luong", "transformer+luong+lstm"]
)
def test_output_does_not_depend_on_batch_size(family):
    """A family, or an ensemble of families (names joined by +)."""
    from translator.models.ensemble import Ensemble

    torch.manual_seed(7)
    members = [tiny_model(name) for name in family.split("+")]
    model = members[0] if len(members) == 1 else Ensemble(members)
    favour_eos(members[0], 0.3)
    g = torch.Generator().manual_seed(3)
    src = torch.randint(4, 30, (7, 9), generator=g)
    for row, length in enumerate([9, 3, 6, 1, 8, 5, 2]):
        src[row, length:] = 0
    for beam in (1, 3):
        together = beam_search(model, src, DecodeConfig(beam=beam, max_len_a=1.0, max_len_b=4))
        for row in range(src.size(0)):
            real = int((src[row] != 0).sum())
            alone = beam_search(
                model,
                src[row : row + 1, :real],
                DecodeConfig(beam=beam, max_len_a=1.0, max_len_b=4),
            )
            assert alone[0][0].tokens == together[row][0].tokens, (family, beam, row)
            assert abs(alone[0][0].score - together[row][0].score) < 1e-4


def prefer_specials(model):
    """Make <pad>, <unk> and <bos> the model's favourite next tokens at every step."""
    real_step = model.step

    def step(prev, state):
        logits, state = real_step(prev, state)
        logits = logits.clone()
        logits[:, [PAD, UNK, BOS]] += 100.0
        logits[:, UNK] += 1.0  # <unk> first among them
        return logits, state

    model.step = step


def test_search_never_outputs_pad_or_bos_and_unk_only_on_request():
    model, src = model_and_src(5)
    prefer_specials(model)
    for search in (greedy_search, lambda m, s, dc: beam_search(m, s, dc.replace(beam=3), 3)):
        plain = [h for hyps in search(model, src, DecodeConfig()) for h in hyps]
        assert sum(len(h.tokens) for h in plain) > len(plain)  # they do say something
        assert not any({PAD, UNK, BOS} & set(h.tokens) for h in plain)
        with_unk = [hyps[0] for hyps in search(model, src, DecodeConfig(allow_unk=True))]
        assert all(UNK in h.tokens for h in with_unk)
        assert not any({PAD, BOS} & set(h.tokens) for h in with_unk)


@pytest.mark.parametrize("family", ["transformer", "luong", "transformer+bahdanau+lstm"])
@pytest.mark.parametrize("beam", [1, 3])
def test_a_search_asked_for_attention_keeps_each_hypothesis_weights(family, beam):
    """The weights come out of the search itself: the same hypotheses and scores as without
    them, and for each one the weights that stepping through its tokens gives."""
    from translator.decode.search import decode
    from translator.models.ensemble import Ensemble

    torch.manual_seed(5)
    members = [tiny_model(name) for name in family.split("+")]
    favour_eos(members[0], 0.4)
    model = members[0] if len(members) == 1 else Ensemble(members)
    _, src = model_and_src(2)
    dc = DecodeConfig(beam=beam, max_len_a=1.0, max_len_b=3)
    nbest = 2 if beam > 1 else 1
    plain = decode(model, src, dc, nbest)
    seen = decode(model, src, dc, nbest, attention_layer=-1)
    assert [[(h.tokens, h.score) for h in s] for s in plain] == [
        [(h.tokens, h.score) for h in s] for s in seen
    ]
    for row, hyps in enumerate(seen):
        for hyp in hyps:
            assert plain[row][0].attention is None
            state = model.init_state(model.encode(src[row : row + 1]))
            want = []
            for token in [BOS, *hyp.tokens]:
                _, state, weights = model.step_attention(torch.tensor([token]), state, -1)
                want.append(weights[0])
            assert torch.allclose(hyp.attention, torch.stack(want), atol=1e-5)


def test_a_search_abandoned_stops_at_its_next_step():
    """Inside abandon_when, every search asks the check once a step and stops with
    Abandoned once it is true; outside, nothing is asked."""
    from translator.decode.loop import Abandoned, abandon_when

    model, src = model_and_src()
    favour_eos(model, -100.0)  # no output ends before its limit of 26 steps
    dc = DecodeConfig(beam=3, max_len_a=2.0, max_len_b=10)
    asked = []

    def after_three_steps():
        asked.append(1)
        return len(asked) > 3

    for search in (greedy_search, beam_search):
        asked.clear()
        with abandon_when(after_three_steps), pytest.raises(Abandoned):
            search(model, src, dc)
        assert len(asked) == 4
    with abandon_when(lambda: False):
        assert len(beam_search(model, src, dc)) == src.size(0)
    asked.clear()
    greedy_search(model, src, dc)
    assert asked == []
