"""Device, precision, threads and seeds: the few facts about the machine the code needs."""

from __future__ import annotations

import contextlib
import functools
import logging
import os
import random
import re

import numpy as np
import torch
from torch.nn.attention import SDPBackend, sdpa_kernel

from translator.errors import UserError

log = logging.getLogger(__name__)

# oneDNN and ideep (PyTorch's layer over it) each cache a kernel per input shape, and batch
# shapes change at every step: the cap bounds that memory yet holds one step's kernels, which
# the recurrent decoders reuse at every time step. Read at the first product; a user's own wins.
KERNEL_CACHE_CAPACITY = "32"  # both caches
os.environ.setdefault("ONEDNN_PRIMITIVE_CACHE_CAPACITY", KERNEL_CACHE_CAPACITY)
os.environ.setdefault("LRU_CACHE_CAPACITY", KERNEL_CACHE_CAPACITY)


def pick_device(name: str = "auto", what: str = "train.device") -> torch.device:
    """The device `name` (auto, cpu, cuda, cuda:N, mps) where this machine has it; `what`
    names the key or option it came from in the error."""
    if name == "auto":
        if torch.cuda.is_available():
            return torch.device("cuda")
        if getattr(torch.backends, "mps", None) and torch.backends.mps.is_available():
            return torch.device("mps")
        return torch.device("cpu")
    if not re.fullmatch(r"auto|cpu|cuda(:\d+)?|mps", name):
        raise UserError(f"{what} is '{name}'; expected auto, cpu, cuda, cuda:N or mps")
    if name.startswith("cuda") and not torch.cuda.is_available():
        raise UserError(f"{what} is '{name}' but no CUDA GPU is available", "use auto or cpu")
    if name.startswith("cuda:") and int(name[5:]) >= torch.cuda.device_count():
        raise UserError(
            f"{what} is '{name}' but this machine has {torch.cuda.device_count()} CUDA GPUs",
            f"use cuda:0 to cuda:{torch.cuda.device_count() - 1}",
        )
    if name == "mps" and not (
        getattr(torch.backends, "mps", None) and torch.backends.mps.is_available()
    ):
        raise UserError(f"{what} is 'mps' but MPS is not available", "use auto or cpu")
    return torch.device(name)


# ONEDNN_MAX_CPU_ISA (or its older name DNNL_MAX_CPU_ISA) values that keep oneDNN below
# AVX512_CORE_BF16, its first level with native bf16 products.
ISAS_WITHOUT_BF16 = (
    "SSE41",
    "AVX",
    "AVX2",
    "AVX2_VNNI",
    "AVX2_VNNI_2",
    "AVX512_CORE",
    "AVX512_CORE_VNNI",
)


@functools.cache
def _cpu_flags() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            return f.read()
    except OSError:
        return ""


def cpu_has_bf16() -> bool:
    """True where oneDNN runs bf16 products natively: the CPU has AVX512-BF16 or AMX and
    ONEDNN_MAX_CPU_ISA does not cap oneDNN below them."""
    isa = os.environ.get("ONEDNN_MAX_CPU_ISA") or os.environ.get("DNNL_MAX_CPU_ISA") or ""
    if isa.strip().upper() in ISAS_WITHOUT_BF16:
        return False
    flags = _cpu_flags()
    return "avx512_bf16" in flags or "amx_bf16" in flags


def pick_dtype(name: str, device: torch.device) -> torch.dtype:
    """Training's precision for train.dtype `name`; bf16 on a CPU that only emulates it is
    kept, as asked, with a warning."""
    if name == "fp32":
        return torch.float32
    if name == "bf16":
        if device.type == "cpu" and not cpu_has_bf16():
            log.warning(
                "train.dtype is bf16 but this CPU has no native bf16 (AVX512-BF16 or AMX): "
                "it is emulated and much slower here; train.dtype: auto or fp32 is the choice"
            )
        return torch.bfloat16
    if name == "fp16":  # runs on the CPU too (slowly there): it tests the loss-scaling path
        return torch.float16
    if device.type == "cuda":
        return torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16
    if device.type == "cpu" and cpu_has_bf16():
        return torch.bfloat16
    return torch.float32


def check_dtype(model: torch.nn.Module, dtype: torch.dtype, device: torch.device) -> None:
    """Refuse float16 training on a CPU for a model holding an LSTM: autocast sends it to
    oneDNN in float16, which has no such kernel (a GRU stays in float32 and runs)."""
    if (
        dtype == torch.float16
        and device.type == "cpu"
        and any(isinstance(m, torch.nn.LSTM) for m in model.modules())
    ):
        raise UserError("train.dtype fp16: PyTorch has no float16 LSTM on the CPU, which "
                        "this model runs", "use train.dtype: auto, bf16 or fp32 on the CPU")  # fmt: skip


def autocast(device: torch.device, dtype: torch.dtype):
    """Mixed precision in `dtype`. On a CPU it also picks attention's plain (math) kernel:
    PyTorch's fused CPU attention runs bf16 as thousands of tiny matrix products per step,
    one per block of each row and head, where the plain kernel runs a few batched ones."""
    if dtype == torch.float32:
        return contextlib.nullcontext()
    cast = torch.autocast(device_type=device.type, dtype=dtype)
    return _with_plain_attention(cast) if device.type == "cpu" else cast


@contextlib.contextmanager
def _with_plain_attention(cast):
    with cast, sdpa_kernel(SDPBackend.MATH):
        yield


def set_threads(n: int) -> None:
    if n > 0:
        torch.set_num_threads(n)
    else:
        torch.set_num_threads(
            len(os.sched_getaffinity(0))
            if hasattr(os, "sched_getaffinity")
            else (os.cpu_count() or 1)
        )


def seed_everything(seed: int) -> None:
    random.seed(seed)
    np.random.seed(seed % (2**32))
    torch.manual_seed(seed)


def to_device(t: torch.Tensor, device: torch.device) -> torch.Tensor:
    """A host tensor on `device`. To a GPU it goes from pinned memory without waiting: the
    host can prepare the next batch while the copy and the step run."""
    if device.type != "cuda":
        return t.to(device)
    return t.pin_memory().to(device, non_blocking=True)
