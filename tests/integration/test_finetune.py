"""train --init-from: a new run from a checkpoint's weights and sentencepiece model, on the
new config's data, with a fresh optimizer, schedule, step and best score."""

import logging

import pytest
import torch
import yaml
from util import tiny_config, user_error

from translator.config import config_from_dict
from translator.data.tokenizer import Tokenizer
from translator.models.checkpoint import Checkpoint
from translator.train.trainer import Trainer

PARENT = tiny_config(seed=8, train={"max_steps": 3, "valid_every": 3})
# Other data (more pairs, another seed) and other tokenizer keys, which are not used.
CHILD = tiny_config(
    seed=9,
    data={"demo_train": 90},
    tokenizer={"vocab_size": 300},
    train={"max_steps": 2, "valid_every": 2, "lr": 0.001},
)


def configured(base, run_dir, *overrides):
    return config_from_dict({**base, "run_dir": str(run_dir)}, overrides=list(overrides))


@pytest.fixture(scope="module")
def parent(tmp_path_factory):
    run_dir = tmp_path_factory.mktemp("parent") / "run"
    Trainer(configured(PARENT, run_dir)).run()
    return run_dir / "best.pt"


def test_a_new_run_starts_from_the_weights_and_the_tokenizer(parent, tmp_path, monkeypatch):
    def no_training(*args, **kwargs):
        raise AssertionError("a fine-tuning run must not train a sentencepiece model")

    monkeypatch.setattr(Tokenizer, "train", no_training)
    saved = Checkpoint.load(parent)
    trainer = Trainer(configured(CHILD, tmp_path / "child"), init_from=parent)
    for name, value in trainer.model.state_dict().items():
        assert torch.equal(value, saved.model[name]), name
    assert trainer.state.step == 0 and trainer.state.best_bleu < 0 and trainer.state.history == []
    assert not trainer.optimizer.state  # a fresh optimizer
    assert 60 < len(trainer.data.batches) <= 90  # the new config's data, not the parent's 60
    trainer.run()
    child = Checkpoint.load(tmp_path / "child" / "last.pt")
    assert child.progress["step"] == 2  # counted from 0, not from the parent's 3
    assert child.tokenizer["src"] == saved.tokenizer["src"]
    assert child.tokenizer["tgt"] == saved.tokenizer["tgt"]
    assert child.tokenizer["sha256"] == saved.tokenizer["sha256"]
    assert not torch.equal(child.model["src_embed.weight"], saved.model["src_embed.weight"])
    assert child.config["data"]["demo_train"] == 90 and child.config["train"]["lr"] == 0.001


def test_model_keys_that_differ_are_named(parent, tmp_path):
    cfg = configured(CHILD, tmp_path / "child", "model.d_model=48", "model.dropout=0.2")
    message = user_error(Trainer, cfg, init_from=parent)
    assert message.startswith(f"--init-from {parent}: model keys differ")
    assert "model.d_model (32 -> 48)" in message and "dropout" not in message
    cfg = configured(CHILD, tmp_path / "child", "model.type=lstm")
    message = user_error(Trainer, cfg, init_from=parent)
    assert 'model.type ("transformer" -> "lstm")' in message and "d_model" not in message


def test_data_of_a_direction_the_checkpoint_never_learnt_is_named(parent, tmp_path, caplog):
    from translator.train.finetune import initial_checkpoint

    with caplog.at_level(logging.WARNING, logger="translator"):
        initial_checkpoint(parent, configured(CHILD, tmp_path / "c"))
        assert not caplog.records  # the checkpoint's own direction
        initial_checkpoint(
            parent, configured(CHILD, tmp_path / "c", "data.src_lang=en", "data.tgt_lang=de")
        )
    assert f"{parent} was trained on de -> en; this run trains en -> de" in caplog.text


def test_a_file_that_is_not_a_checkpoint_is_refused(parent, tmp_path):
    config_file = parent.parent / "config.yaml"
    message = user_error(Trainer, configured(CHILD, tmp_path / "c"), init_from=config_file)
    assert message.startswith("--init-from: ") and str(config_file) in message
    missing = tmp_path / "nothing.pt"
    message = user_error(Trainer, configured(CHILD, tmp_path / "c"), init_from=missing)
    assert "not found" in message and str(missing) in message


def test_init_from_and_resume_do_not_go_together(parent, tmp_path, here):
    message = user_error(Trainer, configured(CHILD, tmp_path / "c"), resume=True, init_from=parent)
    assert "--init-from" in message and "--resume" in message
    path = tmp_path / "child.yaml"
    path.write_text(yaml.safe_dump({**CHILD, "run_dir": str(tmp_path / "c")}))
    result = here("train", "--config", str(path), "--init-from", str(parent), "--resume")
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert result.stderr.strip().count("\n") == 0 and "--init-from" in result.stderr


def test_the_checkpoints_decoding_settings_are_kept_but_for_those_set(parent, tmp_path):
    """A release's beam and length normalisation travel to the fine-tuned model; a decode
    key the new config sets wins."""
    from translator.models.checkpoint import load_checkpoint, save_checkpoint

    raw = load_checkpoint(parent)
    raw["config"]["decode"].update(allow_unk=True, len_norm="power", len_penalty=0.6)
    save_checkpoint(tmp_path / "release.pt", raw)
    cfg = configured(CHILD, tmp_path / "child", "decode.len_penalty=0.8")
    trainer = Trainer(cfg, init_from=tmp_path / "release.pt")
    decode = trainer.cfg.decode
    assert (decode.allow_unk, decode.len_norm, decode.len_penalty) == (True, "power", 0.8)
    assert decode.beam == 2  # (the child's config sets it)
    # resumed with the same config, the run keeps them (last.pt too)
    trainer.run()
    resumed = Trainer(configured(CHILD, tmp_path / "child", "decode.len_penalty=0.8",
                                 "train.max_steps=3"), resume=True)  # fmt: skip
    decode = resumed.cfg.decode
    assert (decode.allow_unk, decode.len_norm, decode.len_penalty) == (True, "power", 0.8)
    resumed.run()
    saved = Checkpoint.load(tmp_path / "child" / "last.pt").config["decode"]
    assert (saved["allow_unk"], saved["len_norm"], saved["len_penalty"]) == (True, "power", 0.8)


def test_a_model_key_set_to_its_default_is_the_configs_word(parent, tmp_path):
    """A key the config sets counts whatever its value: d_model written as 256, the default,
    still differs from the checkpoint's 32 (and a failed start leaves the folder free for the
    next). A config that sets only the checkpoint's own values takes the checkpoint's model;
    a decode key set to its default value wins over the checkpoint's."""
    run = tmp_path / "child"
    for _ in range(2):
        message = user_error(Trainer, configured(CHILD, run, "model.d_model=256"), init_from=parent)
        assert "model.d_model (32 -> 256)" in message
    bare = {k: v for k, v in CHILD.items() if k != "model"}
    cfg = configured(bare, run, "model.type=transformer", "model.d_model=32")
    from translator.models.checkpoint import load_checkpoint, save_checkpoint

    raw = load_checkpoint(parent)
    raw["config"]["decode"].update(len_penalty=0.6)
    save_checkpoint(tmp_path / "release.pt", raw)
    trainer = Trainer(cfg.replace(decode=cfg.decode.replace(len_penalty=1.0)),
                      init_from=tmp_path / "release.pt")  # fmt: skip
    assert trainer.cfg.model.ff_dim == 64 and trainer.cfg.decode.len_penalty == 1.0
    trainer.run_dir.release()
