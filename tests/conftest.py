import os

import pytest
from hypothesis import HealthCheck, settings

# Property-based tests: few examples in `make test`, many in `make fuzz` (--hypothesis-profile
# fuzz). Derandomized by default so that a run of the suite is repeatable; `make fuzz` explores.
settings.register_profile(
    "default",
    max_examples=50,
    derandomize=True,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
settings.register_profile(
    "fuzz",
    max_examples=2000,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
settings.load_profile("default")

# Nothing in the tests may wait on the network.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")


@pytest.fixture(autouse=True)
def _private_cache(tmp_path_factory, monkeypatch):
    """Tokenizer models go to a per-session cache, never to ~/.cache."""
    monkeypatch.setenv("TRANSLATOR_CACHE", str(tmp_path_factory.getbasetemp() / "cache"))


@pytest.fixture
def hf(monkeypatch, tmp_path):
    """`datasets` with the hub switched off and the cache inside tmp_path."""
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    datasets = pytest.importorskip("datasets")
    import huggingface_hub.constants

    # The env vars are read at import time, which may already have happened.
    monkeypatch.setattr(datasets.config, "HF_HUB_OFFLINE", True)
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", True)
    monkeypatch.setattr(datasets.config, "HF_DATASETS_CACHE", tmp_path / "hf-cache")
    datasets.disable_progress_bars()
    return datasets


@pytest.fixture
def no_native_bf16(monkeypatch):
    """The code's view of a CPU whose oneDNN is capped at AVX2."""
    monkeypatch.setenv("ONEDNN_MAX_CPU_ISA", "AVX2")
