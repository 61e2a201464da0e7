"""An exponential moving average (EMA) of the weights, kept in float32 beside the model.

After optimizer update t (1, 2, ...) every floating-point tensor of the model's state
moves the average toward the weights by 1 - d_t, with

    d_t = min(train.ema_decay, (1 + t) / (10 + t))

so that the first updates, when the average would still mostly hold the random
initialisation, follow the weights closely (d_1 = 0.18, d_10 = 0.55, d_100 = 0.92) and the
configured decay takes over later. Integer buffers are not averaged: the model's own are used.

Under torchrun every process updates its own average. DDP keeps the weights bit-identical on
all processes (the same initial weights, then the same all-reduced gradients and the same
optimizer step), and the update is a deterministic function of the weights and `t`, so the
averages stay identical without any communication; a resumed run loads the same saved
average on every process.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import torch
from torch import nn

from translator.errors import UserError


class WeightEMA:
    def __init__(self, model: nn.Module, decay: float):
        self.model, self.decay, self.updates = model, decay, 0
        # Tied weights appear under several names: each tensor is averaged once.
        self.index: dict[str, int] = {}  # state-dict name -> position in `live` / `average`
        self.live: list[torch.Tensor] = []
        position: dict[int, int] = {}
        for name, tensor in model.state_dict(keep_vars=True).items():
            if tensor.is_floating_point():
                if id(tensor) not in position:
                    position[id(tensor)] = len(self.live)
                    self.live.append(tensor)
                self.index[name] = position[id(tensor)]
        self.average = [t.detach().float().clone() for t in self.live]

    def decay_at(self, update: int) -> float:
        return min(self.decay, (1 + update) / (10 + update))

    @torch.no_grad()
    def update(self) -> None:
        """After an optimizer step. Queued on the device like the step: nothing is read back."""
        self.updates += 1
        weight = 1.0 - self.decay_at(self.updates)
        torch._foreach_lerp_(self.average, [t.detach().float() for t in self.live], weight)

    def weights(self) -> dict[str, torch.Tensor]:
        """The model's state dict with the averaged tensors (in the model's dtypes)."""
        state = self.model.state_dict()
        for name, i in self.index.items():
            state[name] = self.average[i].to(state[name].dtype)
        return state

    @contextlib.contextmanager
    def applied(self) -> Iterator[None]:
        """The model holds the averaged weights inside the block, its own ones again after
        (copied back exactly, in place, so the optimizer and DDP see the same tensors)."""
        saved = [t.detach().clone() for t in self.live]
        with torch.no_grad():
            for tensor, average in zip(self.live, self.average):
                tensor.copy_(average)
        try:
            yield
        finally:
            with torch.no_grad():
                for tensor, own in zip(self.live, saved):
                    tensor.copy_(own)

    # -- in last.pt ----------------------------------------------------------------------------
    def state_dict(self) -> dict:
        weights = {name: self.average[i] for name, i in self.index.items()}
        return {"decay": self.decay, "updates": self.updates, "weights": weights}

    def load_state_dict(self, state: dict, where: str) -> None:
        weights = state.get("weights") if isinstance(state, dict) else None
        if not isinstance(weights, dict) or set(weights) != set(self.index):
            raise UserError(f"{where}: the saved moving average does not fit the model")
        with torch.no_grad():
            for name, i in self.index.items():
                self.average[i].copy_(weights[name])
        self.updates = int(state["updates"])
