"""The family registry and the options every family's step shares (models/family.py, base.py)."""

import sys
import textwrap

import pytest
import torch
from util import family_config, user_error

from translator.config import config_from_dict
from translator.models import family as families
from translator.models.family import build_model

SIZES = dict(
    d_model=16, heads=2, ff_dim=32, embed_dim=8, hidden_size=16, enc_layers=1, dec_layers=2
)


def tiny(name):
    torch.manual_seed(0)
    return build_model(family_config(name, dropout=0.0, **SIZES), 20, 20, True).eval()


@pytest.mark.parametrize("name", families.names())
def test_attention_comes_out_of_step_the_same_way_for_every_family(name):
    model = tiny(name)
    src = torch.tensor([[5, 6, 7, 3], [8, 9, 3, 0]])
    state = model.init_state(model.encode(src))
    _, state = model.step(torch.tensor([2, 2]), state)
    if not model.attention_layers:
        with pytest.raises(ValueError):
            model.step_attention(torch.tensor([5, 5]), state, -1)
        return
    for token in (5, 6):
        prev = torch.tensor([token, token])
        logits, seen, weights = model.step_attention(prev, state, -1)
        assert weights.shape == src.shape
        assert torch.allclose(weights.sum(-1), torch.ones(2), atol=1e-5)
        assert torch.all(weights[src == 0] == 0)
        plain, state = model.step(prev, state)  # the same step, the weights left out
        assert torch.equal(logits, plain) and seen.keys() == state.keys()
    with pytest.raises(ValueError):
        model.step_attention(torch.tensor([7, 7]), state, model.attention_layers)


@pytest.mark.parametrize("name", families.names())
def test_log_probs_are_the_float32_log_softmax_of_the_step(name):
    model = tiny(name)
    src = torch.tensor([[5, 6, 7, 3], [8, 9, 3, 0]])
    state = model.init_state(model.encode(src))
    prev = torch.tensor([2, 2])
    with torch.autocast("cpu", dtype=torch.bfloat16):
        logp, _ = model.log_probs(prev, state)
        logits, _ = model.step(prev, state)
    assert logp.dtype == torch.float32
    assert torch.equal(logp, torch.log_softmax(logits.float(), dim=-1))
    assert torch.allclose(logp.exp().sum(-1), torch.ones(2), atol=1e-5)


@pytest.mark.parametrize("name", families.names())
def test_every_family_declares_whether_sentences_may_join_its_searches(name):
    model = tiny(name)
    assert model.supports_streaming  # all four built-in families do
    src = torch.tensor([[5, 6, 7, 3], [8, 9, 3, 0]])
    a = model.init_state(model.encode(src[:1]))
    _, a = model.step(torch.tensor([2]), a)
    b = model.init_state(model.encode(src[1:, :3]))
    logits, _ = model.step(torch.tensor([5, 2]), model.merge_states([a, b]))
    alone = [model.step(torch.tensor([5]), a)[0], model.step(torch.tensor([2]), b)[0]]
    assert torch.allclose(logits, torch.cat(alone), atol=1e-5)


@pytest.mark.parametrize("name", families.names())
def test_the_uncached_step_is_an_option_of_the_interface(name):
    model = tiny(name)
    src = torch.tensor([[5, 6, 7, 3]])
    tokens = torch.tensor([[2], [9], [4]])
    runs = []
    for cache in [True, False] if model.uncached_step else [True]:
        model.use_cache = cache
        state = model.init_state(model.encode(src))
        out = []
        for t in tokens:
            logits, state = model.step(t, state)
            out.append(logits)
        runs.append(torch.stack(out))
    model.use_cache = True
    assert all(torch.allclose(runs[0], r, atol=1e-4) for r in runs)


def test_a_new_family_is_one_module_and_one_registry_line(tmp_path, monkeypatch):
    module = tmp_path / "echo_family.py"
    module.write_text(
        textwrap.dedent(
            """
            import torch
            from torch import nn

            from translator.models.base import Seq2Seq
            from translator.models.family import Family, ModelConfig


            class EchoConfig(ModelConfig):
                type: str = "echo"
                width: int = 4

                def problems(self):
                    yield from super().problems()
                    if self.width < 1:
                        yield "width", "must be at least 1"


            class Echo(Seq2Seq):
                def __init__(self, cfg, src_vocab, tgt_vocab, share_src_tgt=False):
                    super().__init__()
                    self.out = nn.Embedding(tgt_vocab, tgt_vocab)

                def encode(self, src):
                    return {"src": src}

                def init_state(self, memory):
                    return memory

                def step(self, prev_tokens, state):
                    return self.out(prev_tokens), state

                def forward(self, src, tgt_in):
                    return self.out(tgt_in)


            FAMILY = Family("echo", EchoConfig, Echo, "test family")
            """
        )
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setitem(families.MODULES, "echo", "echo_family")
    cfg = config_from_dict({"model": {"type": "echo", "width": 7}})
    assert cfg.model.width == 7 and type(cfg.model).__name__ == "EchoConfig"
    assert "model.width" in user_error(config_from_dict, {"model": {"type": "echo", "width": 0}})
    model = build_model(cfg.model, 11, 11, True)
    from translator.decode.beam import BeamStream
    from translator.decode.search import beam_search

    hyps = beam_search(model, torch.tensor([[4, 5, 3]]), cfg.decode, nbest=2)
    assert len(hyps[0]) == 2
    # The core alone: no attention, and no sentences joining a running search.
    assert model.attention_layers == 0 and not model.supports_streaming
    with pytest.raises(ValueError, match="StreamingStates"):
        BeamStream(model, cfg.decode, capacity=4)
    sys.modules.pop("echo_family", None)


def test_unknown_type_names_every_registered_family():
    message = user_error(config_from_dict, {"model": {"type": "gpt"}})
    assert "model.type" in message and all(n in message for n in families.names())
