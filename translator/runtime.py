"""Device, precision, threads and seeds: the few facts about the machine the code needs."""

from __future__ import annotations

import contextlib
import os
import random
import sys

import numpy as np
import torch
from torch.nn.attention import SDPBackend, sdpa_kernel
from tqdm import tqdm

from translator.errors import UserError

# oneDNN, which runs bf16 matrix products on the CPU, keeps a compiled kernel for every
# input shape it has met, up to 1,024 of them, and so does ideep, PyTorch's layer over it
# (LRU_CACHE_CAPACITY), each with its own cache. Token batches change shape at every step,
# so these caches grew a Multi30k run by 120 MB over its first 600 steps and never stopped
# growing with new shapes (README, "Memory over a long run"). A cap bounds that; it must
# still hold every kernel of one training step, or the recurrent decoders, which run the
# same dozens of products at every time step, compile them again each time: the Luong
# model trains at 1,944 target tokens/s with 8 kept, 2,761 with 32, 2,436 with 1,024
# (scripts/bench_train.py, 2 cores). Both are read at the first matrix product, so
# setting them here, before any, is enough; a user's own wins.
KERNEL_CACHE_CAPACITY = "32"  # both caches; the figures above set the two together
os.environ.setdefault("ONEDNN_PRIMITIVE_CACHE_CAPACITY", KERNEL_CACHE_CAPACITY)
os.environ.setdefault("LRU_CACHE_CAPACITY", KERNEL_CACHE_CAPACITY)


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
    """Mixed precision in `dtype`. On a CPU it also picks attention's plain (math) kernel:
    PyTorch's fused CPU attention runs bf16 as thousands of tiny matrix products per step,
    one per block of each row and head; the plain kernel's few batched products made a
    Multi30k Transformer step about 20% faster (2 cores, bf16)."""
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


def say(message: str) -> None:
    """A progress line printed above any tqdm bar, on stderr like the bars."""
    tqdm.write(message, file=sys.stderr)


def memory_mb() -> dict[str, int]:
    """This process's resident memory now ("rss"), its peak ("peak") and the part of it that
    is not file-backed ("anon", where a memory map of the data does not count), in MiB."""
    fields = {"VmRSS": "rss", "VmHWM": "peak", "RssAnon": "anon"}
    out = {}
    try:
        with open("/proc/self/status", encoding="ascii") as f:
            for line in f:
                name, _, value = line.partition(":")
                if name in fields:
                    out[fields[name]] = round(int(value.split()[0]) / 1024)
    except OSError:  # not Linux: the peak is all the standard library tells
        import resource

        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        out["peak"] = round(peak / (2**20 if sys.platform == "darwin" else 1024))
    return out


def process_seconds() -> float:
    """Seconds since this process started (Linux), for start-up times."""
    try:
        with open("/proc/self/stat", encoding="ascii") as f:
            start_ticks = int(f.read().rpartition(")")[2].split()[19])
        with open("/proc/uptime", encoding="ascii") as f:
            uptime = float(f.read().split()[0])
        return uptime - start_ticks / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return float("nan")


def _libc():
    import ctypes
    import ctypes.util

    try:
        return ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
    except OSError:
        return None


_LIBC = _libc() if sys.platform.startswith("linux") else None


def release_free_memory() -> None:
    """Hand the allocator's free pages back to the system (glibc's malloc_trim).

    Batches of ever-changing shapes leave free holes inside glibc's heaps that the heap
    cannot shrink over, so a long run's resident size creeps up though it uses no more;
    malloc_trim returns the whole free pages inside them, where a plain free cannot."""
    trim = getattr(_LIBC, "malloc_trim", None)
    if trim is not None:
        trim(0)
