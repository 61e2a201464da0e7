import pytest
import torch

from translator.config import DecodeConfig
from translator.models.family import model_config
from translator.models.transformer import Transformer


def tiny(pre_norm=True, vocab=(40, 40), share=True):
    torch.manual_seed(0)
    cfg = model_config(
        d_model=32, heads=4, enc_layers=2, dec_layers=2, ff_dim=64, dropout=0.0, pre_norm=pre_norm
    )
    return Transformer(cfg, vocab[0], vocab[1], share_src_tgt=share).eval()


def batch():
    g = torch.Generator().manual_seed(1)
    src = torch.randint(4, 40, (3, 9), generator=g)
    src[1, 6:] = 0
    tgt = torch.randint(4, 40, (3, 7), generator=g)
    tgt[:, 0] = 2
    return src, tgt


def test_shapes_and_tied_embeddings():
    model = tiny(vocab=(40, 50), share=False)
    src, tgt = batch()
    tgt = tgt.clamp(max=49)
    assert model(src, tgt).shape == (3, 7, 50)
    assert model.generator.weight is model.tgt_embed.weight
    assert model.src_embed is not model.tgt_embed
    memory = model.encode(src)
    assert memory["memory"].shape == (3, 9, 32)
    shared = tiny()
    assert shared.src_embed is shared.tgt_embed


def test_causal_masking_later_tokens_do_not_change_earlier_logits():
    for pre_norm in (True, False):
        model = tiny(pre_norm)
        src, tgt = batch()
        before = model(src, tgt)
        changed = tgt.clone()
        changed[:, 4:] = (changed[:, 4:] + 7) % 36 + 4
        after = model(src, changed)
        assert torch.allclose(before[:, :4], after[:, :4], atol=1e-5)
        assert not torch.allclose(before[:, 4:], after[:, 4:], atol=1e-3)


def test_source_padding_does_not_change_outputs():
    model = tiny()
    src, tgt = batch()
    padded = torch.cat([src, torch.zeros(3, 5, dtype=torch.long)], dim=1)
    assert torch.allclose(model(src, tgt), model(padded, tgt), atol=1e-5)


def test_cached_steps_equal_full_decoder():
    model = tiny()
    src, tgt = batch()
    full = model(src, tgt)
    state = model.init_state(model.encode(src))
    steps = []
    for t in range(tgt.size(1)):
        logits, state = model.step(tgt[:, t], state)
        steps.append(logits)
    assert torch.allclose(full, torch.stack(steps, 1), atol=1e-4)
    assert state["self"][0][0].shape[2] == tgt.size(1)  # one cached key per step


@torch.inference_mode()
def test_reorder_state_selects_rows_and_leaves_the_next_position_free():
    model = tiny()
    src, tgt = batch()
    state = model.init_state(model.encode(src))
    _, state = model.step(tgt[:, 0], state)
    idx = torch.tensor([2, 2, 0])
    picked = model.reorder_state(state, idx)
    cache = picked["self"][1][0]
    assert torch.equal(cache[:, :, :-1], state["self"][1][0][idx])
    assert cache.size(2) == state["self"][1][0].size(2) + 1
    assert picked["pos"] == state["pos"]
    a, after = model.step(tgt[idx, 1], picked)
    b, _ = model.step(tgt[:, 1], state)
    assert torch.allclose(a, b[idx], atol=1e-5)
    assert after["self"][0][0].data_ptr() == picked["self"][0][0].data_ptr()  # filled in place
    # reordered twice with no step between (a copy keeping the free position), then a step:
    # the full decoder's logits for those rows
    again = model.reorder_state(model.reorder_state(after, idx), torch.tensor([0, 1, 2]))
    rows = idx[idx]
    c, _ = model.step(tgt[rows, 2], again)
    assert torch.allclose(c, model(src[rows], tgt[rows, :3])[:, 2], atol=1e-4)


def test_uncached_steps_give_the_same_logits_and_search_output():
    from translator.decode.search import beam_search

    model = tiny()
    src, tgt = batch()
    cached = model.init_state(model.encode(src))
    model.use_cache = False
    uncached = model.init_state(model.encode(src))
    for t in range(tgt.size(1)):
        a, uncached = model.step(tgt[:, t], uncached)
        model.use_cache = True
        b, cached = model.step(tgt[:, t], cached)
        model.use_cache = False
        assert torch.allclose(a, b, atol=1e-4)
    assert "prefix" in uncached and "prefix" not in cached
    slow = beam_search(model, src, DecodeConfig(beam=3), nbest=3)
    model.use_cache = True
    fast = beam_search(model, src, DecodeConfig(beam=3), nbest=3)
    assert [[h.tokens for h in s] for s in slow] == [[h.tokens for h in s] for s in fast]


def test_recorded_cross_attention_is_a_distribution_over_real_source_tokens():
    model = tiny()
    src, tgt = batch()
    state = model.init_state(model.encode(src))
    for t in range(3):
        logits, after, weights = model.step_attention(tgt[:, t], state, -1)
        assert weights.shape == src.shape
        assert torch.allclose(weights.sum(-1), torch.ones(3), atol=1e-5)
        assert torch.all(weights[src == 0] == 0)
        # The weights come back beside the step, which is the step without them.
        plain, state = model.step(tgt[:, t], state)
        assert torch.equal(logits, plain) and after.keys() == state.keys()
    fresh = model.init_state(model.encode(src))
    layers = [model.step_attention(tgt[:, 0], fresh, layer)[2] for layer in (0, 1, -1)]
    assert not torch.allclose(layers[0], layers[1]) and torch.equal(layers[1], layers[2])
    with pytest.raises(ValueError):
        model.step_attention(tgt[:, 0], fresh, 2)


def test_training_self_attention_in_the_decoder_can_take_the_flash_kernel(monkeypatch):
    """The flash kernel of scaled_dot_product_attention takes no explicit mask: the decoder's
    training self-attention must be `is_causal` alone (padding sits after the real tokens).
    The encoder and cross-attention mask padded keys and use the other fused kernels."""
    import translator.models.transformer_layers as tmod

    calls, real = [], tmod.F.scaled_dot_product_attention

    def spy(q, k, v, attn_mask=None, dropout_p=0.0, is_causal=False):
        calls.append((attn_mask is None, is_causal, q.size(2) == k.size(2)))
        return real(q, k, v, attn_mask=attn_mask, dropout_p=dropout_p, is_causal=is_causal)

    monkeypatch.setattr(tmod.F, "scaled_dot_product_attention", spy)
    model = tiny().train()
    src, tgt = batch()
    model(src, tgt).sum().backward()
    causal = [c for c in calls if c[1]]
    assert len(causal) == 2 and all(no_mask for no_mask, _, _ in causal)  # one per decoder layer
    assert sum(1 for no_mask, is_causal, _ in calls if not no_mask and not is_causal) == 4


def test_cpu_mixed_precision_takes_the_plain_attention_kernel_and_stays_close_to_float32():
    """On a CPU, bf16 autocast also selects attention's plain (math) kernel, only inside
    the context; the loss and gradients stay those of float32 within bf16's precision."""
    from translator.runtime import autocast

    cpu = torch.device("cpu")
    assert torch.backends.cuda.flash_sdp_enabled()
    model = tiny().train()
    src, tgt = batch()
    found = {}
    for dtype in (torch.float32, torch.bfloat16):
        model.zero_grad()
        with autocast(cpu, dtype):
            assert torch.backends.cuda.flash_sdp_enabled() == (dtype == torch.float32)
            loss = model(src, tgt).float().logsumexp(-1).mean()
        loss.backward()
        grads = torch.cat([p.grad.flatten() for p in model.parameters() if p.grad is not None])
        found[dtype] = (loss.item(), grads)
    assert torch.backends.cuda.flash_sdp_enabled()
    (loss32, g32), (loss16, g16) = found[torch.float32], found[torch.bfloat16]
    assert abs(loss16 - loss32) < 0.02 * abs(loss32)
    assert torch.nn.functional.cosine_similarity(g16, g32, dim=0) > 0.99


def test_attention_is_kept_off_cudnns_kernel():
    """cuDNN's attention builds a plan per input shape, and batch shapes change at every
    step (docs/benchmarks.md, "On one GPU", has what it costs): the model's module switches
    it off for the process."""
    assert not torch.backends.cuda.cudnn_sdp_enabled()
