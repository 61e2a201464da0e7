"""`--quantize int8`: PyTorch dynamic quantization of a model for CPU decoding.

The weights of every nn.Linear, nn.LSTM, nn.GRU, nn.LSTMCell and nn.GRUCell are stored as
int8 (one scale per tensor) and the activations are quantized on the fly at each call
(`torch.ao.quantization.quantize_dynamic`); embeddings, LayerNorms and attention
products stay float32. It works on any family without knowing which: the module types
are PyTorch's own. It runs on the CPU only.
"""

from __future__ import annotations

import io
import warnings

import torch
from torch import nn

from translator.errors import UserError

SCHEMES = ("int8",)
QUANTIZED_TYPES = {nn.Linear, nn.LSTM, nn.GRU, nn.LSTMCell, nn.GRUCell}


def check_scheme(scheme: str) -> None:
    if scheme not in SCHEMES:
        raise UserError(f"--quantize {scheme}: the schemes are {', '.join(SCHEMES)}")


def quantize_model(model: nn.Module, scheme: str = "int8") -> nn.Module:
    """A quantized copy of `model` (on the CPU, in eval mode); the original is untouched."""
    check_scheme(scheme)
    with warnings.catch_warnings():  # torch.ao.quantization announces its move to torchao
        warnings.simplefilter("ignore")
        return torch.ao.quantization.quantize_dynamic(
            model.cpu().eval(), QUANTIZED_TYPES, dtype=torch.qint8
        )


def weights_bytes(model: nn.Module) -> int:
    """Size of the model's weights as torch.save writes them (packed int8 included)."""
    buffer = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.save(model.state_dict(), buffer)
    return buffer.tell()
