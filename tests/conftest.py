import os

import pytest

# Nothing in the tests may wait on the network.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")


@pytest.fixture(autouse=True)
def _private_cache(tmp_path_factory, monkeypatch):
    """Tokenizer models go to a per-session cache, never to ~/.cache."""
    monkeypatch.setenv("TRANSLATOR_CACHE", str(tmp_path_factory.getbasetemp() / "cache"))
