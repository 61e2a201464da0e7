"""Step checkpoints (train.keep_checkpoints) and `translator average`: the mean of the
weights, float32 sums, integer tensors, refusals of checkpoints that do not belong together."""

import shutil

import pytest
import torch
from util import tiny_config, user_error

import translator.models.checkpoint
from translator.config import TokenizerConfig, config_from_dict
from translator.data.demo import generate_pairs
from translator.data.tokenizer import Tokenizer
from translator.engines.load import load_engine
from translator.models.checkpoint import Checkpoint
from translator.train.averaging import average_checkpoints, average_command
from translator.train.run_dir import RunDir
from translator.train.trainer import Trainer

KEEP = tiny_config(
    seed=3, train={"max_steps": 8, "save_every": 2, "valid_every": 4, "keep_checkpoints": 3}
)


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory):
    run_dir = tmp_path_factory.mktemp("average") / "run"
    Trainer(config_from_dict({**KEEP, "run_dir": str(run_dir)})).run()
    return run_dir


def test_the_last_n_step_checkpoints_are_kept_beside_best_and_last(run_dir):
    steps = [p.name for p in RunDir(run_dir).step_checkpoints()]
    assert steps == ["step-000004.pt", "step-000006.pt", "step-000008.pt"]
    assert (run_dir / "best.pt").is_file() and (run_dir / "last.pt").is_file()
    ckpt = Checkpoint.load(run_dir / "step-000006.pt")
    assert ckpt.optimizer is None and ckpt.progress["step"] == 6  # weights, no training state
    assert not torch.equal(
        ckpt.model["src_embed.weight"], ckpt_weights(run_dir, 8)["src_embed.weight"]
    )


def ckpt_weights(run_dir, step):
    return Checkpoint.load(run_dir / f"step-{step:06d}.pt").model


def test_old_step_checkpoints_go_only_after_the_new_one_is_written(tmp_path, monkeypatch):
    cfg = config_from_dict(
        {**KEEP, "run_dir": str(tmp_path / "run")}, overrides=["train.keep_checkpoints=2"]
    )
    trainer = Trainer(cfg)
    for step in (2, 4):
        trainer.state.step = step
        trainer.save_step()
    real = translator.models.checkpoint.atomic_open

    def disk_full(path, *args, **kwargs):
        if path.name == "step-000006.pt":
            raise OSError(28, "No space left on device")
        return real(path, *args, **kwargs)

    monkeypatch.setattr(translator.models.checkpoint, "atomic_open", disk_full)
    trainer.state.step = 6
    assert "No space left" in user_error(trainer.save_step)
    assert [p.name for p in RunDir(tmp_path / "run").step_checkpoints()] == [
        "step-000002.pt",
        "step-000004.pt",
    ]
    monkeypatch.undo()
    trainer.save_step()
    assert [p.name for p in RunDir(tmp_path / "run").step_checkpoints()] == [
        "step-000004.pt",
        "step-000006.pt",
    ]
    trainer.data.close()


def test_the_average_is_the_elementwise_mean_and_translates(run_dir, tmp_path):
    paths = RunDir(run_dir).step_checkpoints()
    averaged = average_checkpoints(paths)
    inputs = [Checkpoint.load(p).model for p in paths]
    assert averaged.model.keys() == inputs[0].keys()
    for name, tensor in averaged.model.items():
        expected = torch.stack([m[name].double() for m in inputs]).mean(0)
        assert tensor.dtype == inputs[0][name].dtype
        assert torch.allclose(tensor.double(), expected, rtol=0, atol=1e-6), name
    name = "src_embed.weight"
    assert not any(torch.equal(averaged.model[name], m[name]) for m in inputs)
    averaged.save(tmp_path / "avg.pt")
    translator = load_engine(str(tmp_path / "avg.pt"), "cpu")
    assert len(translator.translate(["Ein Hund läuft."])) == 1


def test_sums_are_float32_and_integer_tensors_come_from_the_last(run_dir, tmp_path):
    base = Checkpoint.load(run_dir / "step-000008.pt")
    values = [[256.0, 1.0, 0.5], [1.0, 1.0, 0.5], [1.0, 1.0, 0.75]]
    paths = []
    for i, row in enumerate(values):
        base.model = {
            "w": torch.tensor(row, dtype=torch.bfloat16),
            "count": torch.tensor([i + 10], dtype=torch.int64),
        }
        paths.append(tmp_path / f"{i}.pt")
        base.save(paths[-1])
    averaged = average_checkpoints(paths).model
    expected = (torch.tensor(values, dtype=torch.float64).sum(0) / 3).to(torch.bfloat16)
    assert averaged["w"].dtype == torch.bfloat16 and torch.equal(averaged["w"], expected)
    bf16_sum = torch.tensor(values, dtype=torch.bfloat16)
    naive = (bf16_sum[0] + bf16_sum[1] + bf16_sum[2]) / 3  # a bf16 sum loses the 1s
    assert not torch.equal(naive, expected)
    assert torch.equal(averaged["count"], torch.tensor([12]))


def test_checkpoints_of_another_model_are_refused_naming_both(run_dir, tmp_path):
    other = Checkpoint.load(run_dir / "step-000006.pt")
    other.config["model"]["d_model"] = 48
    other.save(tmp_path / "other.pt")
    first = run_dir / "step-000004.pt"
    message = user_error(average_checkpoints, [first, tmp_path / "other.pt"])
    assert f"cannot average {first} and {tmp_path / 'other.pt'}" in message
    assert "model.d_model (32 -> 48)" in message


def test_checkpoints_of_other_languages_or_tags_are_refused(run_dir, tmp_path):
    """Two runs of one joint subword model on the same sentences, in opposite directions,
    have the same model and tokenizer sections: their languages tell them apart."""
    first = run_dir / "step-000004.pt"
    other = Checkpoint.load(run_dir / "step-000006.pt")
    other.config["data"].update(src_lang="en", tgt_lang="de")
    other.save(tmp_path / "other.pt")
    message = user_error(average_checkpoints, [first, tmp_path / "other.pt"])
    assert message.startswith(f"cannot average {first} and {tmp_path / 'other.pt'}")
    assert "they translate de -> en and en -> de" in message
    tagged = Checkpoint.load(run_dir / "step-000006.pt")
    train = tagged.config["data"].pop("train", None) or {"src": "a.de", "tgt": "a.en"}
    tagged.config["data"]["corpora"] = [{"train": train}, {"train": train, "tag": "<bt>"}]
    tagged.save(tmp_path / "tagged.pt")
    message = user_error(average_checkpoints, [first, tmp_path / "tagged.pt"])
    assert "de -> en and de -> en (tags <bt>)" in message


def test_checkpoints_with_another_tokenizer_are_refused(run_dir, tmp_path):
    other = Checkpoint.load(run_dir / "step-000006.pt")
    pairs = generate_pairs(60, seed=99)
    other.tokenizer = Tokenizer.train(pairs, TokenizerConfig(vocab_size=400), 99).state()
    assert other.tokenizer["src"] != Checkpoint.load(run_dir / "step-000004.pt").tokenizer["src"]
    other.save(tmp_path / "other.pt")
    message = user_error(average_checkpoints, [run_dir / "step-000004.pt", tmp_path / "other.pt"])
    assert "sentencepiece models differ" in message and "other.pt" in message


def test_average_command_picks_the_newest_step_checkpoints(run_dir, tmp_path):
    folder = tmp_path / "run"
    shutil.copytree(run_dir, folder)
    line = average_command(folder, 2, [], None)
    assert "step-000006.pt, step-000008.pt" in line
    written = Checkpoint.load(folder / "average.pt").model
    expected = average_checkpoints(RunDir(folder).step_checkpoints()[-2:]).model
    assert all(torch.equal(written[k], expected[k]) for k in expected)
    assert "holds 3 step checkpoints" in user_error(average_command, folder, 5, [], None)
    assert "--output" in user_error(average_command, None, None, [folder / "best.pt"], None)
    average_command(folder, 2, [], None)  # an earlier average is replaced
    # a run's checkpoint or a file of the user's is not
    last = (folder / "last.pt").read_bytes()
    message = user_error(average_command, folder, 2, [], folder / "last.pt")
    assert "trained for" in message and "refusing to replace it" in message
    assert (folder / "last.pt").read_bytes() == last
    (folder / "notes.txt").write_text("mine")
    assert "refusing" in user_error(average_command, folder, 2, [], folder / "notes.txt")
    assert (folder / "notes.txt").read_text() == "mine"


def test_the_average_command_line(run_dir, tmp_path, here):
    out = tmp_path / "avg.pt"
    args = ["average", "--checkpoint", str(run_dir / "step-000004.pt")]
    args += ["--checkpoint", str(run_dir / "step-000008.pt"), "--output", str(out)]
    result = here(*args)
    assert result.returncode == 0, result.stderr[-2000:]
    assert out.is_file() and "averaged 2 checkpoint(s)" in result.stdout
    shown = here("info", str(out))
    assert "training: the average of 2 checkpoint(s), of steps 4, 8" in shown.stdout
    result = here("average", "--checkpoint", str(run_dir / "config.yaml"), "--output", str(out))
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert result.stderr.strip().count("\n") == 0 and "config.yaml" in result.stderr
