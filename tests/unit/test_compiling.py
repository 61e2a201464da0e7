"""translator.train.compiling: what train.compile compiles, and that it trains the model."""

import pytest
import torch
from torch import nn
from util import family_config

from translator.config import TrainConfig
from translator.models.family import build_model
from translator.models.transformer_layers import Attention, DecoderLayer, EncoderLayer
from translator.specials import PAD
from translator.train.compiling import compiled_loss, length_multiple, training_net
from translator.train.distributed import Group
from translator.train.loss import token_loss
from translator.train.update import Updater

CPU = torch.device("cpu")


def tiny(family: str, dropout: float = 0.0):
    torch.manual_seed(0)
    cfg = family_config(
        family, d_model=16, heads=2, enc_layers=2, dec_layers=2, ff_dim=32, embed_dim=8,
        hidden_size=16, dropout=dropout,
    )  # fmt: skip
    return build_model(cfg, 20, 20, True)


@pytest.fixture
def fresh_dynamo():
    from torch._dynamo.utils import counters

    torch._dynamo.reset()
    counters.clear()
    yield counters
    torch._dynamo.reset()


def batch(rows: int, src_len: int, tgt_len: int):
    return torch.randint(4, 20, (rows, src_len)), torch.randint(4, 20, (rows, tgt_len))


def test_a_compiled_model_on_a_gpu_gets_batches_in_multiples_of_8():
    assert length_multiple(True, torch.device("cuda")) == 8
    assert length_multiple(False, torch.device("cuda")) == 1
    assert length_multiple(True, CPU) == 1  # the CPU: padding would cost
    model = nn.Linear(2, 2)
    tc = TrainConfig(lr=0.1, compile=True)
    assert Updater(model, model, tc, Group(), CPU, torch.float32).multiple == 1


def test_the_transformer_compiles_layer_by_layer_in_a_twin_that_trains_the_model(fresh_dynamo):
    model = tiny("transformer")
    net = training_net(model, True, backend="eager")
    assert net is not model
    # the model itself (validation, decoding) keeps its plain layers
    assert type(model.encoder[0]) is EncoderLayer and type(model.decoder[1]) is DecoderLayer
    assert net.encoder[0] is not model.encoder[0] and net.encoder[0]._orig_mod is model.encoder[0]
    assert {id(p) for p in net.parameters()} == {id(p) for p in model.parameters()}
    src, tgt = batch(3, 5, 6)
    eager = model(src, tgt)
    eager.sum().backward()
    grads = [p.grad.clone() for p in model.parameters()]
    model.zero_grad()
    compiled = net(src, tgt)
    compiled.sum().backward()
    assert torch.allclose(eager, compiled, atol=1e-5)
    for p, g in zip(model.parameters(), grads, strict=True):
        assert torch.allclose(p.grad, g, atol=1e-5)
    # guided alignment's forward: the alignment layer's weights come through the twin too
    (_, weights), (_, compiled_weights) = model(src, tgt, True), net(src, tgt, True)
    assert weights.shape == (3, 6, 5) and torch.allclose(weights, compiled_weights, atol=1e-6)


def test_switching_the_model_to_eval_reaches_the_compiled_layers():
    model = tiny("transformer", dropout=0.5)
    net = training_net(model, True, backend="eager")
    src, tgt = batch(2, 4, 5)
    model.eval()
    assert torch.equal(net(src, tgt), net(src, tgt))  # no dropout
    model.train()
    assert not torch.equal(net(src, tgt), net(src, tgt))


def test_identical_layers_share_a_graph_across_batch_shapes(fresh_dynamo, monkeypatch):
    """One graph for the encoder layers and one for the decoder layers, whatever the batch's
    rows and lengths; duck sizing (torch's default) would recompile where source and target
    lengths first agree, then differ."""
    from torch.fx.experimental import _config as fx_config

    monkeypatch.setattr(fx_config, "use_duck_shape", True)  # torch's default, restored after
    net = training_net(tiny("transformer"), True, backend="eager")
    for shape in [(3, 5, 5), (4, 7, 9), (2, 6, 11), (5, 12, 4)]:
        net(*batch(*shape)).sum().backward()
    assert fresh_dynamo["stats"]["unique_graphs"] == 2, dict(fresh_dynamo["stats"])


@pytest.mark.parametrize("compile", [False, True])
def test_a_model_without_regions_is_compiled_whole_around_its_wrapper(compile):
    model = tiny("luong")
    wrapped = []

    def wrap(net):
        wrapped.append(net)
        return net

    net = training_net(model, compile, wrap, backend="eager")
    assert wrapped == [model]
    assert (net is model) != compile  # compiled: a wrapper of the model
    if compile:
        assert net._orig_mod is model


@pytest.mark.parametrize("compile", [False, True])
def test_compiling_on_the_cpu_warns_that_the_time_budget_waits_for_it(compile, caplog):
    with caplog.at_level("WARNING", logger="translator"):
        training_net(tiny("transformer"), compile, backend="eager")
    warned = [r.getMessage() for r in caplog.records if "train.compile" in r.getMessage()]
    assert len(warned) == compile
    assert all("train.max_minutes" in w for w in warned)


def test_the_transformer_is_wrapped_after_its_layers_are_compiled():
    model, wrapped = tiny("transformer"), []
    net = training_net(model, True, lambda n: wrapped.append(n) or n, backend="eager")
    assert wrapped == [net] and net is not model


def test_the_compiled_token_loss_gives_the_loss_and_its_gradient(fresh_dynamo):
    torch.manual_seed(0)
    logits = torch.randn(3, 4, 20, requires_grad=True)
    target = torch.randint(0, 20, (3, 4))
    target[0, 2:] = 0  # PAD: outside the loss
    plain = token_loss(logits, target, 0.1)
    (grad,) = torch.autograd.grad(plain, logits)
    compiled = compiled_loss(token_loss, backend="eager")(logits, target, 0.1)
    (compiled_grad,) = torch.autograd.grad(compiled, logits)
    assert torch.allclose(plain, compiled) and torch.allclose(grad, compiled_grad)
    assert fresh_dynamo["stats"]["unique_graphs"] == 1


def padded_batch():
    src, tgt = batch(3, 6, 7)
    src[0, 4:] = PAD  # padded keys for the encoder's self-attention and the cross-attention
    tgt[1, 5:] = PAD
    return src, tgt


@pytest.mark.parametrize("compile", [False, True])
def test_attention_as_products_trains_as_the_fused_kernels_do(compile):
    model = tiny("transformer")
    src, tgt = padded_batch()
    fused = training_net(model, False)
    out = fused(src, tgt)
    out.sum().backward()
    grads = [p.grad.clone() for p in model.parameters()]
    model.zero_grad()
    net = training_net(model, compile, attention="products", backend="eager")
    layers = [m for m in model.modules() if isinstance(m, Attention)]
    assert len(layers) == 6 and all(m.products for m in layers)  # 2 encoder, 2x2 decoder
    products = net(src, tgt)
    products.sum().backward()
    assert torch.allclose(out, products, atol=1e-5)
    for p, g in zip(model.parameters(), grads, strict=True):
        assert torch.allclose(p.grad, g, atol=1e-5)
    training_net(model, False)  # the default again: the fused kernels
    assert not any(m.products for m in layers)


def test_attention_as_products_drops_weights_in_training_only():
    torch.manual_seed(0)
    cfg = family_config(
        "transformer", d_model=16, heads=2, enc_layers=1, dec_layers=1, ff_dim=32, dropout=0.0,
        attention_dropout=0.5,
    )  # fmt: skip
    model = build_model(cfg, 20, 20, True)
    net = training_net(model, False, attention="products")
    src, tgt = padded_batch()
    assert not torch.equal(net(src, tgt), net(src, tgt))  # fresh dropout masks each time
    model.eval()
    products = net(src, tgt)
    training_net(model, False)
    assert torch.allclose(products, net(src, tgt), atol=1e-5)
