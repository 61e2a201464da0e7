"""The builders of the GPU tests (tests/gpu_helpers.py) run on the CPU, so a broken config or
helper shows in every test run, not only on a machine with a GPU."""

import math

import pytest
import torch
from decoding import RNN_VARIANTS, RNN_VOCAB
from gpu_helpers import (
    attention_names,
    changed,
    exact_float32,
    forward_backward,
    gpu_config,
    open_trainer,
    padded_batch,
    profiled_names,
    rnn_model,
    transformer,
    weights,
)

CPU = torch.device("cpu")


def test_the_gpu_training_configs_are_valid_and_train_on_the_cpu(tmp_path):
    for dtype in ("bf16", "fp16"):
        assert gpu_config(tmp_path, dtype, dtype=dtype).train.device == "cuda"
    assert gpu_config(tmp_path, "compiled", dtype="fp32", compile=True).train.compile
    with open_trainer(gpu_config(tmp_path, "run", device="cpu", dtype="fp32")) as trainer:
        before = weights(trainer.model)
        assert not changed(trainer.model, before)
        trainer.train_step()
        assert changed(trainer.model, before)
        assert math.isfinite(trainer.updater.read().loss)


@pytest.mark.parametrize("variant", list(RNN_VARIANTS))
def test_the_recurrent_builders_run_forward_and_backward(variant):
    src, tgt, tgt_out = padded_batch()
    with exact_float32():
        memory, logits, grads = forward_backward(rnn_model(variant).train(), src, tgt, tgt_out)
    assert memory and logits.shape == (*tgt.shape, RNN_VOCAB)
    assert grads and all(torch.isfinite(g).all() for g in grads.values())


def test_a_profile_names_the_attention_the_transformer_ran():
    model = transformer(CPU)
    src, tgt, _ = padded_batch()
    names = profiled_names(lambda: model(src, tgt).sum().backward(), CPU)
    assert "aten::scaled_dot_product_attention" in names
    fused, math_path = attention_names(names)
    assert fused or math_path, sorted(names)  # the CPU runs one of them
    assert attention_names({"aten::_scaled_dot_product_attention_math"}) == ([], True)
    kernels = {"void pytorch_flash::flash_fwd_kernel<>", "fmha_cutlassB_bf16_aligned"}
    assert attention_names(kernels) == (sorted(kernels), False)
