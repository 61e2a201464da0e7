"""train.ema_decay: the moving average of the weights, what validation scores and best.pt
holds, and an exact resume of the average."""

import torch
from torch import nn

from translator.train.ema import WeightEMA


class Tied(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(3, 2)
        self.out = nn.Linear(2, 3, bias=True)
        self.out.weight = self.embed.weight
        self.register_buffer("count", torch.zeros((), dtype=torch.int64))


def test_each_update_follows_the_documented_decay():
    torch.manual_seed(0)
    model = Tied()
    ema = WeightEMA(model, decay=0.8)
    expected = {k: v.double().clone() for k, v in model.state_dict().items() if k != "count"}
    for t in range(1, 8):
        with torch.no_grad():
            for p in model.parameters():
                p.add_(torch.randn_like(p))
        ema.update()
        d = min(0.8, (1 + t) / (10 + t))
        for name, tensor in model.state_dict().items():
            if name != "count":
                expected[name] = d * expected[name] + (1 - d) * tensor.double()
    weights = ema.weights()
    for name, value in expected.items():
        assert torch.allclose(weights[name].double(), value, atol=1e-6), name
        assert not torch.allclose(weights[name], model.state_dict()[name]), name
    assert torch.equal(weights["embed.weight"], weights["out.weight"])  # still tied
    assert ema.updates == 7 and weights["count"].dtype == torch.int64


def test_applied_swaps_the_average_in_and_the_weights_back_exactly():
    torch.manual_seed(1)
    model = Tied()
    ema = WeightEMA(model, decay=0.5)
    with torch.no_grad():
        model.out.bias.add_(1.0)
    ema.update()
    own = {k: v.clone() for k, v in model.state_dict().items()}
    with ema.applied():
        inside = {k: v.clone() for k, v in model.state_dict().items()}
    for name, value in ema.weights().items():
        assert torch.equal(inside[name], value), name
    assert not torch.equal(inside["out.bias"], own["out.bias"])
    for name, value in model.state_dict().items():
        assert torch.equal(value, own[name]), name
