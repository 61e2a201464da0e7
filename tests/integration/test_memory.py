"""Memory that must not grow with the shapes a run meets: bf16 matrix products on the CPU
(oneDNN, through PyTorch's ideep layer) keep a compiled kernel per input shape, and token
batches change shape at every step."""

import os
import subprocess
import sys

import pytest

from translator.runtime import cpu_has_bf16

# Fresh process: the caches' sizes are read at the first matrix product.
PROBE = """
import torch
import translator.memory as memory

torch.set_num_threads(1)
weight = torch.randn(1024, 256, dtype=torch.bfloat16, requires_grad=True)


def products(first, count):
    for rows in range(first, first + count):
        x = torch.randn(rows, 256, dtype=torch.bfloat16, requires_grad=True)
        torch.nn.functional.linear(x, weight).sum().backward()
    memory.release_free_memory()
    return memory.memory_mb()["rss"]


before = products(100, 50)
print(products(150, 300) - before)
"""


def growth_mb(**env: str) -> int:
    out = subprocess.run(
        [sys.executable, "-c", PROBE],
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        check=True,
        timeout=300,
    )
    return int(out.stdout.split()[-1])


@pytest.mark.skipif(not cpu_has_bf16(), reason="bf16 products run through oneDNN on such CPUs")
def test_new_shapes_do_not_grow_the_process():
    # The probe sees the growth when both caches keep PyTorch's default of 1,024 kernels...
    grown = growth_mb(LRU_CACHE_CAPACITY="1024", ONEDNN_PRIMITIVE_CACHE_CAPACITY="1024")
    assert grown > 60
    # ...and translator's defaults keep 300 more shapes within a few MB.
    assert growth_mb() < 20 < grown
