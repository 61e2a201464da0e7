"""What only a CUDA GPU shows: mixed-precision training steps (bf16, and fp16 with its dynamic
loss scale), fused AdamW, the fused attention kernels, cuDNN's recurrent kernels against the
CPU, a training step that never waits for the device, torch.compile against eager, and the
cached decoder step against the uncached one. `make test-gpu` runs them; without a GPU
tests/gpu/conftest.py skips them."""

import copy
import math

import pytest
import torch
from decoding import RNN_VARIANTS
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
from torch.nn.attention import SDPBackend, sdpa_kernel

from translator.config import DecodeConfig
from translator.decode.search import greedy_search
from translator.runtime import autocast
from translator.train.update import fused_adamw_supported

CUDA = torch.device("cuda")

# -- training steps ------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", ["bf16", "fp16"])
def test_a_mixed_precision_step_trains_the_transformer(tmp_path, dtype):
    # At fp16's first scale (2**16) a step may overflow and be skipped, halving the scale:
    # a few steps leave room for that and must still hold a good one.
    steps = 4 if dtype == "fp16" else 1
    with open_trainer(gpu_config(tmp_path, dtype, dtype=dtype)) as trainer:
        assert trainer.device.type == "cuda"
        assert trainer.dtype == {"bf16": torch.bfloat16, "fp16": torch.float16}[dtype]
        before = weights(trainer.model)
        for _ in range(steps):
            trainer.train_step()
        stats = trainer.updater.read()
        scale = trainer.updater.scaler.get_scale()
        assert math.isfinite(stats.loss), stats
        assert stats.skipped < steps, stats
        assert changed(trainer.model, before)
        # autocast computes in low precision; the weights the optimizer keeps stay float32
        assert all(p.dtype == torch.float32 for p in trainer.model.parameters())
    if dtype == "fp16":
        assert 1.0 < scale <= 2.0**16, scale  # dynamic loss scaling at work
    else:
        assert scale == 1.0, scale  # bf16 needs no scale: held at exactly 1


def test_adamw_is_fused_on_cuda(tmp_path):
    assert fused_adamw_supported(CUDA)
    with open_trainer(gpu_config(tmp_path, "run")) as trainer:
        optimizer = trainer.optimizer
        assert optimizer.defaults["fused"] is True
        assert all(group["fused"] for group in optimizer.param_groups)
        trainer.train_step()
        states = list(optimizer.state.values())
        assert states and all(s["step"].device.type == "cuda" for s in states)


@pytest.mark.parametrize("dtype", ["bf16", "fp16"])
def test_a_training_step_never_waits_for_the_gpu(tmp_path, dtype):
    """Any host sync inside train_step (a .item(), a blocking copy, boolean indexing) raises
    under the sync debug mode; the loss is read only at log intervals (Updater.read)."""
    with open_trainer(gpu_config(tmp_path, dtype, dtype=dtype)) as trainer:
        trainer.train_step()  # the batch thread, the optimizer's state, the first kernels
        torch.cuda.synchronize()
        torch.cuda.set_sync_debug_mode("error")
        try:
            trainer.train_step()
        finally:
            torch.cuda.set_sync_debug_mode("default")
        stats = trainer.updater.read()
    assert math.isfinite(stats.loss), stats


def test_compiled_training_gives_the_eager_first_loss(tmp_path):
    losses = []
    try:
        with exact_float32():
            with open_trainer(gpu_config(tmp_path, "eager", dtype="fp32")) as eager:
                start = {k: v.clone() for k, v in eager.model.state_dict().items()}
                eager.train_step()
                losses.append(eager.updater.read().loss)
            config = gpu_config(tmp_path, "compiled", dtype="fp32", compile=True)
            with open_trainer(config) as compiled:
                assert compiled.net is not compiled.model  # the compiled wrapper trains
                compiled.model.load_state_dict(start)  # the same weights whatever the seeding
                compiled.train_step()
                losses.append(compiled.updater.read().loss)
    finally:
        torch._dynamo.reset()
    assert all(math.isfinite(x) for x in losses), losses
    assert math.isclose(losses[0], losses[1], rel_tol=1e-4, abs_tol=1e-5), losses


# -- attention kernels ---------------------------------------------------------------------------


def test_the_decoder_causal_self_attention_runs_the_flash_kernel():
    """Training calls the decoder's self-attention with no mask and is_causal=True, which
    flash takes: with SDPA held to flash alone, a mask or layout it refused would raise."""
    model = transformer(CUDA)
    attention = model.decoder[0].self_attn
    x = torch.randn(4, 12, 64, device=CUDA, requires_grad=True)

    def run():
        with sdpa_kernel(SDPBackend.FLASH_ATTENTION), autocast(CUDA, torch.bfloat16):
            y, _ = attention.forward_self(x, causal=True)
            y.float().square().sum().backward()

    names = profiled_names(run, CUDA)
    flash = [n for n in names if "flash" in n.lower()]
    assert flash, sorted(names)
    assert x.grad is not None and torch.isfinite(x.grad).all()


def batch_on_cuda():
    src, tgt, _ = padded_batch()
    return src.to(CUDA), tgt.to(CUDA)


def test_training_attention_takes_fused_kernels_not_the_math_path():
    """SDPA as training calls it (bf16), whichever fused kernel torch prefers on this card
    (flash, or cuDNN's on sm90/sm100 with a recent cuDNN); never the plain math path."""
    model = transformer(CUDA)
    src, tgt = batch_on_cuda()

    def run():
        with autocast(CUDA, torch.bfloat16):
            logits = model(src, tgt)
        logits.float().square().mean().backward()

    names = profiled_names(run, CUDA)
    fused, math_path = attention_names(names)
    assert fused and not math_path, sorted(names)


def test_the_encoder_padding_mask_keeps_a_fused_kernel():
    """A boolean padding mask rules flash out; the memory-efficient (or cuDNN) kernel takes
    it instead of the math path."""
    model = transformer(CUDA)
    src, _ = batch_on_cuda()
    assert (src == model.pad_id).any()  # the mask is not all True

    def run():
        with autocast(CUDA, torch.bfloat16):
            memory = model.encode(src)["memory"]
        memory.float().square().mean().backward()

    names = profiled_names(run, CUDA)
    fused, math_path = attention_names(names)
    assert fused and not math_path, sorted(names)


# -- recurrent families --------------------------------------------------------------------------


@pytest.mark.parametrize("variant", list(RNN_VARIANTS))
def test_recurrent_models_on_cuda_match_the_cpu(variant):
    """Packed padded batches through cuDNN give the CPU's float32 encoder outputs, logits
    and gradients."""
    with exact_float32():
        cpu = rnn_model(variant).train()  # cuDNN's backward needs training mode
        gpu = copy.deepcopy(cpu).to(CUDA)
        src, tgt, tgt_out = padded_batch()
        memory, logits, grads = forward_backward(cpu, src, tgt, tgt_out)
        on_gpu = forward_backward(gpu, src.to(CUDA), tgt.to(CUDA), tgt_out.to(CUDA))
    gpu_memory, gpu_logits, gpu_grads = on_gpu
    assert memory.keys() == gpu_memory.keys()
    for key, value in memory.items():
        other = gpu_memory[key].cpu()
        if value.is_floating_point():
            torch.testing.assert_close(other, value, atol=1e-4, rtol=1e-4, msg=key)
        else:
            assert torch.equal(other, value), key
    torch.testing.assert_close(gpu_logits.cpu(), logits, atol=1e-4, rtol=1e-4)
    assert grads.keys() == gpu_grads.keys()
    for name, grad in grads.items():
        torch.testing.assert_close(gpu_grads[name].cpu(), grad, atol=1e-4, rtol=1e-3, msg=name)


def test_the_lstm_encoder_runs_cudnn_on_packed_sequences():
    model = rnn_model("lstm").train().to(CUDA)
    src, _ = batch_on_cuda()

    def run():
        memory = model.encode(src)
        (memory["h"].square().sum() + memory["c"].square().sum()).backward()

    names = profiled_names(run, CUDA)
    cudnn = [n for n in names if "cudnn_rnn" in n.lower() or "cudnnrnn" in n.lower()]
    assert cudnn, sorted(names)
    assert "aten::_thnn_fused_lstm_cell" not in names, sorted(names)  # the non-cuDNN cell


# -- decoding --------------------------------------------------------------------------------------


def test_cached_and_uncached_decoding_agree_on_cuda():
    model = transformer(CUDA).eval()
    src, tgt = batch_on_cuda()
    dc = DecodeConfig(max_len_a=1.0, max_len_b=5)
    with exact_float32(), torch.no_grad():
        full = torch.log_softmax(model(src, tgt), -1)
        cached = greedy_search(model, src, dc)
        steps = {}
        for use_cache in (True, False):
            model.use_cache = use_cache
            state = model.init_state(model.encode(src))
            out = []
            for t in range(tgt.size(1)):
                logp, state = model.log_probs(tgt[:, t], state)
                out.append(logp)
            steps[use_cache] = torch.stack(out, 1)
        uncached = greedy_search(model, src, dc)  # (use_cache is False here)
        model.use_cache = True
    assert "prefix" in state  # the uncached step recomputed the whole prefix
    torch.testing.assert_close(steps[True], steps[False], atol=1e-4, rtol=1e-4)
    torch.testing.assert_close(steps[True], full, atol=1e-4, rtol=1e-4)
    tokens = [[h.tokens for h in hyps] for hyps in cached]
    assert tokens == [[h.tokens for h in hyps] for hyps in uncached]
    assert any(row[0] for row in tokens), tokens  # something was decoded
