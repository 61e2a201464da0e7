"""What `train.compile` compiles, and how.

A model that names its repeated layers (`Seq2Seq.compile_regions`, the Transformer's
encoder and decoder stacks) is compiled layer by layer: identical layers share one graph,
so compiling costs a few layers' time rather than the whole network's, and the fusions that
matter (norms, dropout, residuals, activations around each product) are inside a layer.
The compiled layers live in a training twin that shares the model's weights, so validation
and decoding keep calling the model itself, uncompiled. Other models are compiled whole.
The token loss, a log-softmax over the whole vocabulary, is compiled on its own.
"""

from __future__ import annotations

import copy
import logging
from collections.abc import Callable

import torch
from torch import nn

from translator.models.transformer_layers import Attention

log = logging.getLogger(__name__)


def length_multiple(compiled: bool, device: torch.device) -> int:
    """A compiled model on a GPU gets lengths in multiples of 8: one alignment for inductor's
    kernels (another is a recompile) and for the tensor cores. On a CPU the padding costs."""
    return 8 if compiled and device.type == "cuda" else 1


def _symbolic(net, backend: str):
    """torch.compile with symbolic sizes, since shapes change from batch to batch. Duck
    sizing is off: it makes equal source and target lengths one symbol, and then every batch
    where they differ recompiles (about a minute for Transformer-big on an H200)."""
    from torch.fx.experimental import _config as fx_config

    fx_config.use_duck_shape = False
    return torch.compile(net, dynamic=True, backend=backend)


def compiled_regions(model: nn.Module, backend: str = "inductor") -> nn.Module:
    """A shallow twin of `model` whose `compile_regions` stacks hold compiled layers: the
    same parameters, buffers and submodules, so a step through the twin trains the model."""
    twin = copy.copy(model)
    twin._modules = dict(model._modules)  # its own table of children; the children are shared
    for name in model.compile_regions:
        layers = model._modules[name]
        twin._modules[name] = nn.ModuleList(_symbolic(layer, backend) for layer in layers)
    return twin


def training_net(
    model: nn.Module,
    compile: bool,
    wrap: Callable[[nn.Module], nn.Module] | None = None,
    attention: str = "fused",
    backend: str = "inductor",
) -> nn.Module:
    """What training calls: `model`, its attention computed as `attention` (train.attention)
    says, compiled where `compile` asks, and wrapped by `wrap` (DistributedDataParallel
    under torchrun). Regions are compiled inside the wrapper; a whole model is compiled
    around it, as torch recommends for DDP."""
    for module in model.modules():
        if isinstance(module, Attention):
            module.products = attention == "products"
    if compile and next(model.parameters()).device.type == "cpu":
        log.warning("train.compile on the CPU: the first steps compile for minutes, which "
                    "train.max_minutes cannot cut short, and compiled steps are seldom "
                    "faster here (docs/benchmarks.md, Training speed)")  # fmt: skip
    regions = compile and bool(getattr(model, "compile_regions", ()))
    net = compiled_regions(model, backend) if regions else model
    if wrap is not None:
        net = wrap(net)
    return _symbolic(net, backend) if compile and not regions else net


def compiled_loss(loss: Callable, backend: str = "inductor") -> Callable:
    """`loss` compiled: the cast to float32, the log-softmax, the smoothing and the gradient
    become a few passes over the logits instead of one per operation."""
    return _symbolic(loss, backend)
