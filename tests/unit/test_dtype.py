"""bf16 on CPUs without native bf16 (no AVX512-BF16 or AMX, or oneDNN capped below them by
ONEDNN_MAX_CPU_ISA): `auto` picks float32, an explicit bf16 warns once and still trains, and
the recurrent families run their LSTMs in float32 there, where oneDNN has no bf16 LSTM.

CI runs this file once more with ONEDNN_MAX_CPU_ISA=AVX2 (make test-avx2), where oneDNN
itself has no bf16 kernels. Inside a test the variable only changes what the code reads:
oneDNN reads it once, at its first primitive, which this module runs on import."""

import logging

import pytest
import torch
from dtypes import BF16_FLAGS, CPU, NATIVE

from translator import runtime
from translator.models.rnn import run_rnn
from translator.runtime import cpu_has_bf16, pick_dtype


@pytest.mark.parametrize(
    "env, value, native",
    [
        ("ONEDNN_MAX_CPU_ISA", None, True),
        ("ONEDNN_MAX_CPU_ISA", "ALL", True),
        ("ONEDNN_MAX_CPU_ISA", "AVX512_CORE_BF16", True),
        ("ONEDNN_MAX_CPU_ISA", "AVX512_CORE_AMX", True),
        ("ONEDNN_MAX_CPU_ISA", "AVX2", False),
        ("ONEDNN_MAX_CPU_ISA", "avx2", False),  # oneDNN reads the value in any case
        ("ONEDNN_MAX_CPU_ISA", "AVX512_CORE_VNNI", False),
        ("DNNL_MAX_CPU_ISA", "AVX512_CORE", False),  # the older name of the variable
    ],
)
def test_an_isa_cap_below_avx512_bf16_means_no_native_bf16(monkeypatch, env, value, native):
    monkeypatch.setattr(runtime, "_cpu_flags", lambda: BF16_FLAGS)
    for name in ("ONEDNN_MAX_CPU_ISA", "DNNL_MAX_CPU_ISA"):
        monkeypatch.delenv(name, raising=False)
    if value is not None:
        monkeypatch.setenv(env, value)
    assert cpu_has_bf16() is native
    assert pick_dtype("auto", CPU) == (torch.bfloat16 if native else torch.float32)


def test_a_cpu_without_the_flags_has_no_native_bf16(monkeypatch):
    monkeypatch.delenv("ONEDNN_MAX_CPU_ISA", raising=False)
    monkeypatch.setattr(runtime, "_cpu_flags", lambda: "flags\t\t: fpu sse avx2 fma\n")
    assert not cpu_has_bf16()
    assert pick_dtype("auto", CPU) == torch.float32


def test_bf16_without_native_support_warns_once_and_is_kept(no_native_bf16, caplog):
    with caplog.at_level(logging.WARNING, logger="translator"):
        assert pick_dtype("bf16", CPU) == torch.bfloat16
        assert pick_dtype("fp32", CPU) == torch.float32
        assert pick_dtype("auto", CPU) == torch.float32
    assert len(caplog.records) == 1, caplog.text
    line = caplog.records[0].getMessage()
    assert "\n" not in line and "emulated" in line and "much slower" in line
    assert "auto" in line and "fp32" in line


@pytest.mark.skipif(not NATIVE, reason="oneDNN has no native bf16 here")
def test_native_bf16_is_picked_without_a_warning(monkeypatch, caplog):
    monkeypatch.delenv("ONEDNN_MAX_CPU_ISA", raising=False)
    monkeypatch.delenv("DNNL_MAX_CPU_ISA", raising=False)
    with caplog.at_level(logging.WARNING, logger="translator"):
        assert pick_dtype("bf16", CPU) == pick_dtype("auto", CPU) == torch.bfloat16
    assert not caplog.records


def lstm_and_input(seed=0):
    torch.manual_seed(seed)
    lstm = torch.nn.LSTM(8, 6, num_layers=2, batch_first=True)
    x = torch.randn(3, 5, 8)
    hx = (torch.randn(2, 3, 6), torch.randn(2, 3, 6))
    return lstm, x, hx


def test_lstms_run_in_float32_under_bf16_autocast_without_native_bf16(no_native_bf16):
    lstm, x, (h0, c0) = lstm_and_input()
    h0 = h0.bfloat16()  # as a bridge's Linear under autocast hands it over
    plain, (h, c) = lstm(x, (h0.float(), c0))
    with torch.autocast("cpu", dtype=torch.bfloat16):
        out, (h16, c16) = run_rnn(lstm, x, (h0, c0))
        out.sum().backward()  # training goes through it too
    assert out.dtype == torch.float32
    assert torch.equal(out, plain) and torch.equal(h16, h) and torch.equal(c16, c)
    assert lstm.weight_ih_l0.grad is not None


@pytest.mark.skipif(not NATIVE, reason="oneDNN has no native bf16 here")
def test_lstms_keep_bf16_where_the_cpu_has_it(monkeypatch):
    monkeypatch.delenv("ONEDNN_MAX_CPU_ISA", raising=False)
    monkeypatch.delenv("DNNL_MAX_CPU_ISA", raising=False)
    lstm, x, hx = lstm_and_input()
    with torch.autocast("cpu", dtype=torch.bfloat16):
        out, _ = run_rnn(lstm, x, hx)
    assert out.dtype == torch.bfloat16
    assert torch.allclose(out.float(), lstm(x, hx)[0], atol=0.05)
