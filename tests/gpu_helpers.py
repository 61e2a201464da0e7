"""What the GPU tests (tests/gpu/) build: tiny trainers on a chosen device and precision,
small recurrent models with padded batches, fp32 without TF32, and the names a profile saw.
Everything takes a device, so that a CPU test (tests/integration/test_gpu_helpers.py) checks these
builders even on a machine without a GPU."""

from __future__ import annotations

import contextlib

import torch
from decoding import RNN_VARIANTS, RNN_VOCAB
from util import tiny_config

from translator.config import config_from_dict
from translator.specials import BOS, EOS, PAD

# The Transformer of the training tests: heads of 32 dimensions, which every fused attention
# kernel takes (flash wants a multiple of 8).
GPU_MODEL = {"d_model": 64, "heads": 2, "ff_dim": 128, "dropout": 0.0}


def gpu_config(tmp_path, name: str, device: str = "cuda", dtype: str = "bf16", **train):
    """The tiny training config on `device` in `dtype`, writing to tmp_path/name."""
    changes = {"device": device, "dtype": dtype, "max_steps": 100, **train}
    raw = tiny_config(run_dir=str(tmp_path / name), model=GPU_MODEL, train=changes)
    return config_from_dict(raw)


@contextlib.contextmanager
def open_trainer(cfg):
    """A Trainer of `cfg` whose batch thread is stopped afterwards."""
    from translator.train.trainer import Trainer

    trainer = Trainer(cfg)
    try:
        yield trainer
    finally:
        trainer.close(finished=True)


def weights(model) -> list[torch.Tensor]:
    """A copy of every parameter, to compare with after a step."""
    return [p.detach().clone() for p in model.parameters()]


def changed(model, before: list[torch.Tensor]) -> bool:
    """Whether any parameter differs from `before`."""
    return any(not torch.equal(p.detach(), b) for p, b in zip(model.parameters(), before))


@contextlib.contextmanager
def exact_float32():
    """fp32 products without TF32 (cuBLAS and cuDNN), so a GPU result can be held to the
    CPU's within 1e-4; the earlier settings come back afterwards."""
    matmul, cudnn = torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    try:
        yield
    finally:
        torch.backends.cuda.matmul.allow_tf32 = matmul
        torch.backends.cudnn.allow_tf32 = cudnn


def profiled_names(fn, device: torch.device) -> set[str]:
    """The names of the operators and (on a GPU) the kernels that `fn()` ran."""
    from torch.profiler import ProfilerActivity, profile

    activities = [ProfilerActivity.CPU]
    if device.type == "cuda":
        activities.append(ProfilerActivity.CUDA)
    with profile(activities=activities) as prof:
        fn()
        if device.type == "cuda":
            torch.cuda.synchronize(device)
    names = set()
    for event in prof.events():
        names.add(event.name)
        names.update(kernel.name for kernel in getattr(event, "kernels", []) or [])
    return names


def rnn_model(variant: str, seed: int = 0):
    """A freshly initialised recurrent model of RNN_VARIANTS[variant], without dropout (so
    that training mode, which cuDNN's backward needs, gives the same outputs everywhere)."""
    from translator.models.family import build_model, model_config

    torch.manual_seed(seed)
    keys = dict(embed_dim=16, hidden_size=32, enc_layers=2, dec_layers=2, dropout=0.0)
    keys.update(RNN_VARIANTS[variant])
    return build_model(model_config(**keys), RNN_VOCAB, RNN_VOCAB, joint_vocab=True)


def padded_batch(seed: int = 1, lengths=(9, 6, 3, 7, 1, 8)):
    """Sources of different lengths (each ending in <eos>, then padding), and targets
    (<bos> first) with their next tokens, on the CPU."""
    g = torch.Generator().manual_seed(seed)
    src = torch.randint(4, RNN_VOCAB, (len(lengths), max(lengths)), generator=g)
    for row, n in enumerate(lengths):
        src[row, n - 1] = EOS
        src[row, n:] = PAD
    tgt = torch.randint(4, RNN_VOCAB, (len(lengths), 7), generator=g)
    tgt[:, 0] = BOS
    tgt_out = torch.cat([tgt[:, 1:], torch.full((len(lengths), 1), EOS)], 1)
    tgt_out[1, 4:] = PAD  # rows of different target lengths too
    return src, tgt, tgt_out


def forward_backward(model, src, tgt, tgt_out):
    """The encoder's outputs, the logits and the gradients of a mean cross-entropy."""
    import torch.nn.functional as F

    model.zero_grad(set_to_none=True)
    memory = model.encode(src)
    logits = model(src, tgt)
    loss = F.cross_entropy(logits.flatten(0, 1), tgt_out.flatten(), ignore_index=PAD)
    loss.backward()
    grads = {n: p.grad for n, p in model.named_parameters() if p.grad is not None}
    return memory, logits, grads


def transformer(device: torch.device, seed: int = 0):
    """A Transformer of GPU_MODEL's sizes, 2 layers each side, in training mode on `device`."""
    from translator.models.family import build_model, model_config

    torch.manual_seed(seed)
    cfg = model_config(**GPU_MODEL, enc_layers=2, dec_layers=2)
    return build_model(cfg, RNN_VOCAB, RNN_VOCAB, True).to(device).train()


def attention_names(names: set[str]) -> tuple[list[str], bool]:
    """Which fused attention kernels or operators a profile names (flash, memory-efficient,
    cuDNN's), and whether the plain math path ran."""
    marks = ("flash", "efficient", "mem_eff", "fmha", "cudnn_attention", "sdpa")
    fused = sorted(n for n in names if any(m in n.lower() for m in marks))
    return fused, "aten::_scaled_dot_product_attention_math" in names
