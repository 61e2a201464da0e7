"""translator.train.update: which weights decay, and fused AdamW where torch has it."""

import math

import pytest
import torch
from torch import nn
from util import family_config

from translator.config import TrainConfig
from translator.models.family import build_model
from translator.train.distributed import Group
from translator.train.update import Updater, fused_adamw_supported

CPU = torch.device("cpu")


def updater_for(model, **train):
    tc = TrainConfig(**{"lr": 0.1, "clip_norm": 0.0, **train})
    return Updater(model, model, tc, Group(), CPU, torch.float32)


@pytest.mark.parametrize("family", ["transformer", "luong"])
def test_weight_decay_spares_biases_norms_and_embeddings(family):
    torch.manual_seed(0)
    cfg = family_config(
        family, d_model=16, heads=2, enc_layers=1, dec_layers=1, ff_dim=32, embed_dim=8,
        hidden_size=16,
    )  # fmt: skip
    model = build_model(cfg, 20, 20, True)
    exempt = {
        id(p)
        for m in model.modules()
        if isinstance(m, (nn.Embedding, nn.LayerNorm))
        for p in m.parameters(recurse=False)
    }
    before = {name: p.detach().clone() for name, p in model.named_parameters()}
    updater = updater_for(model, weight_decay=0.5)
    for p in model.parameters():
        p.grad = torch.zeros_like(p)  # no gradient: any change is the decay
    updater.optimizer.step()
    decayed = 0
    for name, p in model.named_parameters():
        if p.ndim < 2 or id(p) in exempt:
            assert torch.equal(p, before[name]), name
        else:
            assert torch.allclose(p, before[name] * (1 - 0.1 * 0.5)), name
            decayed += 1
    assert decayed > 0
    assert exempt, "the model has embeddings"


def test_fused_adamw_is_asked_of_torch(monkeypatch):
    real = torch.optim.AdamW

    class CudaOnlyFusedAdamW(real):  # like torch 2.3: fused kernels for CUDA alone
        def __init__(self, params, *args, fused=None, **kwargs):
            params = list(params)
            flat = (
                [p for g in params for p in g["params"]] if isinstance(params[0], dict) else params
            )
            if fused and any(p.device.type != "cuda" for p in flat):
                raise RuntimeError("`fused=True` requires all the params to be on: ['cuda']")
            super().__init__(params, *args, fused=fused, **kwargs)

    monkeypatch.setattr(torch.optim, "AdamW", CudaOnlyFusedAdamW)
    assert not fused_adamw_supported(CPU)
    model = nn.Linear(3, 2)
    updater = updater_for(model)  # builds, unfused, instead of failing
    assert not updater.optimizer.defaults["fused"]


@pytest.mark.parametrize("clip", [0.0, 0.5])
def test_the_read_gradient_norm_is_the_mean_before_clipping(clip):
    torch.manual_seed(3)
    model = nn.Linear(4, 3)
    updater = updater_for(model, clip_norm=clip)
    updater.scaler.scale(torch.tensor(1.0))  # as a backward would (the scale is 1 in fp32)
    norms = []
    for scale in (1.0, 3.0):
        grads = [torch.randn_like(p) * scale for p in model.parameters()]
        for p, g in zip(model.parameters(), grads):
            p.grad = g.clone()
        norms.append(torch.cat([g.flatten() for g in grads]).norm().item())
        before = [p.detach().clone() for p in model.parameters()]
        updater.step(torch.tensor(1.0), lr=0.1)
        assert not torch.equal(before[0], model.weight)
        if clip:
            assert torch.cat([p.grad.flatten() for p in model.parameters()]).norm() <= clip + 1e-5
        else:  # unclipped gradients are left exactly as they were
            assert all(torch.equal(p.grad, g) for p, g in zip(model.parameters(), grads))
    assert updater.read().grad_norm == pytest.approx(sum(norms) / 2, rel=1e-5)
    updater.step(torch.tensor(float("nan")), lr=0.1)  # a skipped step adds no norm
    assert math.isnan(updater.read().grad_norm)


@pytest.mark.parametrize("family", ["transformer", "luong", "bahdanau", "lstm"])
def test_padding_a_batch_to_a_multiple_leaves_its_loss(family):
    """A compiled model on a GPU trains on batches padded to multiples of 8: the extra PAD
    columns must be masked and outside the loss, in every family."""
    from translator.data.batching import TokenBatches
    from translator.train.loss import sequence_loss

    torch.manual_seed(0)
    cfg = family_config(
        family, d_model=16, heads=2, enc_layers=1, dec_layers=1, ff_dim=32, embed_dim=8,
        hidden_size=16, dropout=0.0,
    )  # fmt: skip
    model = build_model(cfg, 20, 20, True).eval()
    src = [[5, 6, 7, 8, 3], [9, 4, 3], [11, 3]]
    tgt = [[1, 8, 9, 10, 2], [1, 11, 12, 13, 14, 15, 2], [1, 16, 2]]
    batch = TokenBatches(src, tgt, 1000, seed=0).collate([0, 1, 2])
    padded = batch.padded(8)
    assert padded.src.size(1) == 8 > batch.src.size(1)
    with torch.no_grad():
        plain, wide = sequence_loss(model, batch, 0.1), sequence_loss(model, padded, 0.1)
    assert torch.allclose(plain, wide, rtol=1e-5, atol=1e-5), (plain, wide)
