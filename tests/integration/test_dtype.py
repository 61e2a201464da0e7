"""Training in bf16 on a CPU without native bf16: the recurrent families train, warning once
(tests/unit/test_dtype.py has the rules; importing tests/dtypes.py runs oneDNN's first
primitive)."""

import logging
from pathlib import Path

import pytest
import torch
from util import tiny_config

from translator.config import config_from_dict
from translator.train.trainer import Trainer


@pytest.mark.parametrize("family", ["lstm", "luong"])
def test_recurrent_training_in_bf16_without_native_bf16(family, no_native_bf16, tmp_path, caplog):
    cfg = tiny_config(
        run_dir=str(tmp_path / "run"), train={"dtype": "bf16", "max_steps": 3, "device": "cpu"}
    )
    cfg["model"] = {"type": family, "embed_dim": 16, "hidden_size": 16, "dropout": 0.0}
    cfg["model"] |= {"enc_layers": 1, "dec_layers": 1}
    if family == "luong":  # the decoder is one nn.LSTM over the whole target
        cfg["model"] |= {"attention_score": "dot", "input_feeding": False}
    with caplog.at_level(logging.WARNING, logger="translator"):
        trainer = Trainer(config_from_dict(cfg))
    warned = [r for r in caplog.records if "emulated" in r.getMessage()]
    assert len(warned) == 1, caplog.text
    assert trainer.dtype == torch.bfloat16
    state = trainer.run()
    assert state.step == 3 and all(loss is not None for _, loss in state.losses)
    assert state.history and state.history[-1]["dev_loss"] < float("inf")


@pytest.mark.parametrize("family", ["lstm", "luong", "bahdanau"])
def test_fp16_on_the_cpu_is_refused_where_the_model_runs_an_lstm(family, tmp_path):
    from translator.errors import UserError

    cfg = tiny_config(
        run_dir=str(tmp_path / "run"), train={"dtype": "fp16", "max_steps": 1, "device": "cpu"}
    )
    cfg["model"] = {"type": family, "embed_dim": 16, "hidden_size": 16, "dropout": 0.0}
    if family == "bahdanau":  # GRUs: autocast leaves them in float32, and training runs
        cfg["model"]["rnn_type"] = "gru"
        assert Trainer(config_from_dict(cfg)).run().step == 1
        cfg["model"]["rnn_type"], cfg["run_dir"] = "lstm", str(tmp_path / "lstm")
    with pytest.raises(UserError, match="no float16 LSTM on the CPU, which this model runs"):
        Trainer(config_from_dict(cfg))
    assert not Path(cfg["run_dir"]).exists()  # (a run that cannot start leaves no folder)
