"""What the bf16 tests know of this CPU, fixed before any test changes oneDNN's ISA cap."""

import torch

from translator.runtime import cpu_has_bf16

# oneDNN takes its ISA cap from the environment at its first primitive: run one now, so that
# the caps the tests set never reach it (nor the test modules after the first to import this).
torch.nn.LSTM(2, 2)(torch.zeros(1, 1, 2))
CPU = torch.device("cpu")
NATIVE = cpu_has_bf16()  # this process's answer, before any test changes the cap
BF16_FLAGS = "flags\t\t: fpu sse avx2 avx512f avx512bw avx512_bf16\n"
