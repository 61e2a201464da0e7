"""Device, precision, threads and seeds: the few facts about the machine the code needs."""

from __future__ import annotations

import contextlib
import os
import random
import sys

import numpy as np
import torch
from tqdm import tqdm

from translator.errors import UserError


def pick_device(name: str = "auto") -> torch.device:
    if name == "auto":
        if torch.cuda.is_available():
            return torch.device("cuda")
        if getattr(torch.backends, "mps", None) and torch.backends.mps.is_available():
            return torch.device("mps")
        return torch.device("cpu")
    if name.startswith("cuda") and not torch.cuda.is_available():
        raise UserError(
            f"train.device is '{name}' but no CUDA GPU is available", "use train.device=auto or cpu"
        )
    if name == "mps" and not (
        getattr(torch.backends, "mps", None) and torch.backends.mps.is_available()
    ):
        raise UserError("train.device is 'mps' but MPS is not available", "use auto or cpu")
    return torch.device(name)


def cpu_has_bf16() -> bool:
    """True where the CPU has native bf16 dot products (AVX512-BF16 or AMX)."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            flags = f.read()
    except OSError:
        return False
    return "avx512_bf16" in flags or "amx_bf16" in flags


def pick_dtype(name: str, device: torch.device) -> torch.dtype:
    if name == "fp32":
        return torch.float32
    if name == "bf16":
        return torch.bfloat16
    if name == "fp16":  # runs on the CPU too (slowly there): it tests the loss-scaling path
        return torch.float16
    if device.type == "cuda":
        return torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16
    if device.type == "cpu" and cpu_has_bf16():
        return torch.bfloat16
    return torch.float32


def autocast(device: torch.device, dtype: torch.dtype):
    if dtype == torch.float32:
        return contextlib.nullcontext()
    return torch.autocast(device_type=device.type, dtype=dtype)


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


def say(message: str) -> None:
    """A progress line printed above any tqdm bar, on stderr like the bars."""
    tqdm.write(message, file=sys.stderr)
