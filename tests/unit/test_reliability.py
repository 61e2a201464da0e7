"""Faults and hostile input: signals during training, kills during checkpoint writes,
mismatched checkpoints, over-long input, and random bytes for the loaders."""

import os

import pytest
import torch
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from util import yaml_values

from translator.config import DataConfig, load_config
from translator.data.corpus import load_corpus
from translator.errors import UserError
from translator.models.checkpoint import load_checkpoint, save_checkpoint


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(data=st.binary(max_size=400))
def test_config_loader_random_bytes_load_or_user_error(tmp_path, data):
    path = tmp_path / "random.yaml"
    path.write_bytes(data)
    try:
        load_config(path)
    except UserError as err:
        assert "\n" not in str(err)


@settings(
    max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    doc=st.dictionaries(
        st.sampled_from(["run_dir", "seed", "data", "model", "train", "decode", "tokenizer", "x"]),
        yaml_values
        | st.dictionaries(
            st.sampled_from(["lr", "beam", "type", "dir", "max_steps"]), yaml_values, max_size=3
        ),
        max_size=4,
    )
)
def test_config_loader_random_structures_load_or_user_error(tmp_path, doc):
    path = tmp_path / "random.yaml"
    path.write_text(yaml.safe_dump(doc))
    try:
        load_config(path)
    except UserError as err:
        assert "\n" not in str(err)


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    src=st.binary(max_size=300),
    tgt=st.binary(max_size=300),
    kind=st.sampled_from(["text", "tsv", "jsonl"]),
)
def test_corpus_readers_random_bytes_load_or_user_error(tmp_path, src, tgt, kind):
    folder = tmp_path / f"corpus_{kind}"
    folder.mkdir(exist_ok=True)
    for old in folder.iterdir():
        old.unlink()
    for split in ("train", "dev", "test"):
        if kind == "text":
            (folder / f"{split}.de").write_bytes(src)
            (folder / f"{split}.en").write_bytes(tgt)
        else:
            (folder / f"{split}.{kind}").write_bytes(src + tgt)
    try:
        corpus = load_corpus(DataConfig(dir=str(folder)))
        assert corpus.train
    except UserError as err:
        assert "\n" not in str(err)


def test_disk_full_keeps_the_previous_checkpoint(tmp_path, monkeypatch):
    path = tmp_path / "last.pt"
    save_checkpoint(path, {"model": {"w": torch.ones(2)}, "n": 1})
    real_fdopen = os.fdopen

    class FullDisk:
        def __init__(self, f):
            self.f = f

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            self.f.close()

        def write(self, data):
            raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "fdopen", lambda fd, mode, **kw: FullDisk(real_fdopen(fd, mode, **kw)))
    with pytest.raises(UserError) as err:
        save_checkpoint(path, {"model": {"w": torch.zeros(2)}, "n": 2})
    assert "No space left" in str(err.value)
    monkeypatch.setattr(os, "fdopen", real_fdopen)
    assert load_checkpoint(path)["n"] == 1
    assert [p.name for p in tmp_path.iterdir()] == ["last.pt"]
