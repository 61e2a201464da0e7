"""--ensemble: several models decoding as one through the shared interface."""

import json

import pytest
from util import tiny_config, user_error

from translator.config import config_from_dict
from translator.engines.load import load_engine
from translator.train.trainer import Trainer

# -- checkpoints through the command line ----------------------------------------------------


@pytest.fixture(scope="module")
def runs(tmp_path_factory, three_steps):
    """Two families with one tokenizer, and a model with another tokenizer."""
    root = tmp_path_factory.mktemp("ensemble")
    out = {"transformer": three_steps}  # tiny_config, 3 steps, as the two below
    for name, changes in {
        "luong": {"model": {"type": "luong", "embed_dim": 16, "hidden_size": 16}},
        "other": {"tokenizer": {"vocab_size": 450}},
    }.items():
        cfg = tiny_config(run_dir=str(root / name), train={"max_steps": 3}, **changes)
        Trainer(config_from_dict(cfg)).run()
        out[name] = root / name / "last.pt"
    return out


def test_checkpoints_of_an_ensemble_must_share_tokenizer_and_languages(runs, tmp_path):
    a, b, other = runs["transformer"], runs["luong"], runs["other"]
    message = user_error(load_engine, [a, other], ensemble=True)
    assert str(a) in message and str(other) in message and "tokenizer" in message
    message = user_error(load_engine, [a, b], ensemble=False)
    assert "--ensemble" in message
    translator = load_engine([a, b], ensemble=True)
    assert translator.name == "ensemble of transformer + luong"
    # A model of the opposite direction may share a joint vocabulary, not the ensemble.
    from translator.models.checkpoint import Checkpoint

    ckpt = Checkpoint.load(b)
    ckpt.config["data"] = {**ckpt.config["data"], "src_lang": "en", "tgt_lang": "de"}
    reverse = tmp_path / "reverse.pt"
    ckpt.save(reverse)
    message = user_error(load_engine, [a, reverse], ensemble=True)
    assert str(reverse) in message and "en->de" in message


def test_translate_and_eval_with_an_ensemble(runs, tmp_path, here):
    a, b, other = str(runs["transformer"]), str(runs["luong"]), str(runs["other"])
    both = ["--checkpoint", a, "--checkpoint", b]
    result = here("translate", *both, "--ensemble", "--nbest", "2", "Ein Hund läuft.", "Hallo")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert [line.split("\t")[0] for line in lines] == ["0", "0", "1", "1"]
    result = here("translate", *both, "Ein Hund läuft.")
    assert result.returncode == 2 and "--ensemble" in result.stderr.splitlines()[-1]
    result = here("translate", "--checkpoint", a, "--checkpoint", other, "--ensemble", "Hallo")
    last = result.stderr.strip().splitlines()[-1]
    assert result.returncode == 2 and a in last and other in last, result.stderr
    result = here("eval", *both, "--ensemble", "--beam", "2", "--json")
    assert result.returncode == 0, result.stderr
    (row,) = [json.loads(line) for line in result.stdout.splitlines()]
    assert row["checkpoint"] == f"{a} + {b}" and row["n"] == 10 and row["beam"] == 2
    picture = tmp_path / "attention.png"
    result = here("translate", *both, "--ensemble", "--plot-attention", str(picture), "Hallo Welt")
    assert result.returncode == 0, result.stderr
    assert picture.read_bytes()[:4] == b"\x89PNG"
