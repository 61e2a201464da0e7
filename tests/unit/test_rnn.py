"""The recurrent families (lstm, bahdanau, luong) against the shared model interface."""

import pytest
import torch
from decoding import RNN_ATTENTION as ATTENTION
from decoding import RNN_VARIANTS as VARIANTS
from decoding import RNN_VOCAB as VOCAB

from translator.config import DecodeConfig
from translator.data.tokenizer import BOS, EOS, PAD
from translator.decode.search import beam_search, greedy_search
from translator.models.attention import (
    AdditiveAttention,
    DotAttention,
    GeneralAttention,
    luong_attention,
)
from translator.models.bahdanau import Bahdanau
from translator.models.family import build_model, model_config
from translator.models.luong import Luong
from translator.models.rnn import reverse_real_tokens
from translator.models.sutskever import SutskeverLSTM
from translator.models.transformer import Transformer


def tiny(name, seed=0, **extra):
    torch.manual_seed(seed)
    kw = dict(embed_dim=12, hidden_size=16, enc_layers=2, dec_layers=2, dropout=0.3)
    kw.update(VARIANTS[name], **extra)
    return build_model(model_config(**kw), VOCAB, VOCAB, joint_vocab=True).eval()


def batch(seed=1):
    g = torch.Generator().manual_seed(seed)
    src = torch.randint(4, VOCAB, (4, 9), generator=g)
    for row, n in enumerate([9, 6, 3, 7]):  # real tokens, the last one <eos>
        src[row, n - 1] = EOS
        src[row, n:] = PAD
    tgt = torch.randint(4, VOCAB, (4, 6), generator=g)
    tgt[:, 0] = BOS
    return src, tgt


def run_steps(model, src, tgt):
    state = model.init_state(model.encode(src))
    logits, states = [], []
    for t in range(tgt.size(1)):
        out, state = model.step(tgt[:, t], state)
        logits.append(out)
        states.append(state)
    return torch.stack(logits, 1), states


@pytest.mark.parametrize(
    "family, cls", [("lstm", SutskeverLSTM), ("bahdanau", Bahdanau), ("luong", Luong)]
)
def test_build_model_picks_the_family(family, cls):
    cfg = model_config(type=family, embed_dim=8, hidden_size=8, enc_layers=1, dec_layers=1)
    assert type(build_model(cfg, 20, 20, joint_vocab=True)) is cls
    assert isinstance(build_model(model_config(d_model=8, heads=2), 20, 20, True), Transformer)


@pytest.mark.parametrize("name", VARIANTS)
def test_shapes_of_forward_step_and_state(name):
    model = tiny(name)
    src, tgt = batch()
    assert model(src, tgt).shape == (4, 6, VOCAB)
    state = model.init_state(model.encode(src))
    logits, state = model.step(tgt[:, 0], state)
    assert logits.shape == (4, VOCAB)
    for key, value in state.items():
        assert value.size(0) == 4, key  # batch row first: the default reorder_state works
    assert state["h"].shape == (4, 2, 16)
    if VARIANTS[name]["type"] == "lstm":
        assert model.attention_layers == 0
    else:
        seen, after, weights = model.step_attention(tgt[:, 1], state, -1)
        assert weights.shape == (4, 9)
        logits, plain = model.step(tgt[:, 1], state)
        assert torch.equal(seen, logits) and plain.keys() == after.keys()


@pytest.mark.parametrize("name", VARIANTS)
def test_step_by_step_equals_teacher_forcing(name):
    model = tiny(name)
    src, tgt = batch()
    with torch.no_grad():
        full = model(src, tgt)
        steps, _ = run_steps(model, src, tgt)
    assert torch.allclose(full, steps, atol=1e-5, rtol=0)


@pytest.mark.parametrize("name", VARIANTS)
def test_padding_and_other_sentences_do_not_change_outputs(name):
    model = tiny(name)
    src, tgt = batch()
    with torch.no_grad():
        full = model(src, tgt)
        padded = torch.cat([src, torch.zeros(4, 5, dtype=torch.long)], 1)
        assert torch.allclose(full, model(padded, tgt), atol=1e-5, rtol=0)
        for row in range(4):
            n = int((src[row] != PAD).sum())
            alone = model(src[row : row + 1, :n], tgt[row : row + 1])
            assert torch.allclose(full[row : row + 1], alone, atol=1e-5, rtol=0)


@pytest.mark.parametrize("name", ATTENTION)
def test_attention_weights_sum_to_one_and_are_zero_on_padding(name):
    model = tiny(name)
    src, tgt = batch()
    real = src != PAD
    state = model.init_state(model.encode(src))
    for t in range(tgt.size(1)):
        with torch.no_grad():
            _, state, weights = model.step_attention(tgt[:, t], state, -1)
        assert torch.all(weights[~real] == 0)
        assert torch.allclose(weights.sum(-1), torch.ones(4), atol=1e-6)
        assert torch.all(weights[real] > 0)


def test_scorers_mask_padding_for_one_step_and_many():
    torch.manual_seed(0)
    memory = torch.randn(3, 5, 8)
    mask = torch.tensor([[1, 1, 1, 1, 1], [1, 1, 0, 0, 0], [1, 0, 0, 0, 0]], dtype=torch.bool)
    scorers = [(AdditiveAttention(6, 8, 7), 6), (DotAttention(), 8), (GeneralAttention(6, 8), 6)]
    scorers += [(luong_attention(s, 6, 8), 6) for s in ("general", "concat")]
    for scorer, q in scorers:
        keys = scorer.precompute(memory)
        context, weights = scorer(torch.randn(3, q), keys, memory, mask)
        assert context.shape == (3, 8) and weights.shape == (3, 5)
        assert torch.all(weights[~mask] == 0)
        assert torch.allclose(weights.sum(-1), torch.ones(3))
        assert torch.allclose(context[2], memory[2, 0], atol=1e-6)  # one real position
        many, many_w = scorer(torch.randn(3, 4, q), keys, memory, mask)
        assert many.shape == (3, 4, 8) and torch.all(many_w.transpose(0, 1)[:, ~mask] == 0)
    with pytest.raises(ValueError):
        luong_attention("dot", 6, 8)


@pytest.mark.parametrize("name", ATTENTION)
def test_keys_are_projected_once_per_sentence(name):
    model = tiny(name)
    src, tgt = batch()
    calls = []
    key_proj = getattr(model.attention, "key_proj", None)
    if key_proj is None:  # dot: the keys are the (projected) encoder outputs themselves
        return
    key_proj.register_forward_hook(lambda *_: calls.append(1))
    with torch.no_grad():
        run_steps(model, src, tgt)
        assert len(calls) == 1
        model(src, tgt)
        assert len(calls) == 2


@pytest.mark.parametrize("name", VARIANTS)
def test_beam_of_one_equals_greedy_and_beams_are_sorted(name):
    model = tiny(name, seed=3)
    src, _ = batch(seed=4)
    with torch.no_grad():
        model.generator.bias[EOS] += 1.0  # hypotheses of different lengths
    greedy = greedy_search(model, src, DecodeConfig(max_len_a=1.0, max_len_b=3))
    beam = beam_search(model, src, DecodeConfig(beam=1, max_len_a=1.0, max_len_b=3))
    assert [h[0].tokens for h in greedy] == [h[0].tokens for h in beam]
    for g, b in zip(greedy, beam):
        assert abs(g[0].score - b[0].score) < 1e-4
    nbest = beam_search(model, src, DecodeConfig(beam=3, max_len_a=1.0, max_len_b=3), nbest=3)
    for hyps in nbest:
        assert 1 <= len(hyps) <= 3
        scores = [h.score for h in hyps]
        assert scores == sorted(scores, reverse=True)
        assert len({tuple(h.tokens) for h in hyps}) == len(hyps)  # distinct hypotheses


def test_reverse_real_tokens_keeps_eos_and_padding_in_place():
    src = torch.tensor(
        [[5, 6, 7, EOS, PAD, PAD], [8, 9, 10, 11, 12, EOS], [EOS, PAD, PAD, PAD, PAD, PAD]]
    )
    expected = torch.tensor(
        [[7, 6, 5, EOS, PAD, PAD], [12, 11, 10, 9, 8, EOS], [EOS, PAD, PAD, PAD, PAD, PAD]]
    )
    before = src.clone()
    assert torch.equal(reverse_real_tokens(src), expected)
    assert torch.equal(src, before)  # the input is left alone
    assert torch.equal(reverse_real_tokens(expected), src)
    no_eos = torch.tensor([[4, 5, 6, PAD]])
    assert torch.equal(reverse_real_tokens(no_eos), torch.tensor([[6, 5, 4, PAD]]))


def test_lstm_reads_the_source_reversed():
    reversed_model = tiny("lstm")
    plain = tiny("lstm", reverse_source=False)
    src, _ = batch()
    with torch.no_grad():
        a = reversed_model.encode(src)
        b = plain.encode(reverse_real_tokens(src))
    assert torch.allclose(a["h"], b["h"]) and torch.allclose(a["c"], b["c"])


def test_lstm_bridge_only_when_depths_differ():
    assert tiny("lstm").bridge is None
    model = tiny("lstm", enc_layers=3, dec_layers=2)
    src, _ = batch()
    state = model.init_state(model.encode(src))
    assert model.encode(src)["h"].shape == (4, 3, 16) and state["h"].shape == (4, 2, 16)


def test_tied_and_shared_embeddings():
    model = tiny("luong-general-feed")  # hidden 16 != embed 12: projected before the output
    assert model.generator.weight is model.tgt_embed.weight
    assert model.src_embed is model.tgt_embed
    assert model.out_proj is not None and model.out_proj.weight.shape == (12, 16)
    same = tiny("bahdanau-gru")  # the max-out readout is already embed_dim wide
    assert same.out_proj is None and same.generator.weight is same.tgt_embed.weight
    untied = build_model(
        model_config(type="luong", embed_dim=12, hidden_size=16, tie_embeddings=False),
        30,
        40,
        False,
    )
    assert untied.generator.weight.shape == (40, 16) and untied.out_proj is None
    assert untied.src_embed is not untied.tgt_embed
    dot = tiny("luong-dot")
    assert dot.memory_proj.weight.shape == (16, 32)  # bidirectional 2x16 -> 16 for h_t^T h_s


@pytest.mark.parametrize("name", ["lstm", "bahdanau-lstm", "luong-general-feed", "luong-dot"])
def test_weights_round_trip_and_bf16_autocast(name):
    model = tiny(name)
    src, tgt = batch()
    again = tiny(name, seed=7)
    again.load_state_dict(model.state_dict())
    with torch.no_grad():
        assert torch.equal(model(src, tgt), again(src, tgt))
        with torch.autocast("cpu", dtype=torch.bfloat16):
            assert torch.isfinite(model(src, tgt).float()).all()
            assert len(greedy_search(model, src, DecodeConfig(max_len_a=1.0, max_len_b=2))) == 4


# --- learning: each family memorises 32 demo pairs --------------------------------------------
