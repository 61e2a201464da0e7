"""--resume: the config changes it refuses and the ones it allows, files it cannot resume
from, and every process's own random state under torchrun (2 CPU processes, gloo)."""

import logging
import shutil

import pytest
import torch
from training import DDP, torchrun
from training import RESUME_TINY as TINY
from util import user_error

from translator.config import config_from_dict
from translator.train.trainer import Trainer


def configured(run_dir, *overrides):
    return config_from_dict({**TINY, "run_dir": str(run_dir)}, overrides=list(overrides))


@pytest.fixture(scope="module")
def saved_run(tmp_path_factory):
    """A 2-step run: its folder holds last.pt and best.pt."""
    run_dir = tmp_path_factory.mktemp("resume") / "run"
    Trainer(configured(run_dir)).run()
    return run_dir


def copy_of(saved_run, tmp_path):
    run_dir = tmp_path / "run"
    shutil.copytree(saved_run, run_dir)
    return run_dir


def test_changes_that_break_the_run_are_refused_with_their_keys(saved_run, tmp_path):
    run_dir = copy_of(saved_run, tmp_path)
    cfg = configured(run_dir, "model.d_model=48", "seed=2", "train.batch_tokens=500")
    message = user_error(Trainer, cfg, resume=True)
    assert message.startswith(f"cannot resume {run_dir / 'last.pt'}: config keys differ")
    assert "model.d_model (32 -> 48)" in message and "seed (6 -> 2)" in message
    assert "train.batch_tokens (400 -> 500)" in message and "new run_dir" in message
    # a change that can resume is not named among them
    cfg = configured(run_dir, "seed=2", "train.max_steps=9")
    assert "max_steps" not in user_error(Trainer, cfg, resume=True)


def test_changes_that_continue_the_run_are_allowed_and_logged(saved_run, tmp_path, caplog):
    run_dir = copy_of(saved_run, tmp_path)
    cfg = configured(run_dir, "train.max_steps=4", "decode.beam=3", "train.log_every=2")
    with caplog.at_level(logging.INFO, logger="translator"):
        trainer = Trainer(cfg, resume=True)
    changed = [r.message for r in caplog.records if "changed settings" in r.message]
    assert len(changed) == 1, caplog.text
    assert "train.max_steps (2 -> 4)" in changed[0] and "decode.beam (2 -> 3)" in changed[0]
    assert "train.log_every (25 -> 2)" in changed[0]
    assert trainer.run().step == 4


def test_resuming_a_finished_run_validates_no_step_twice(saved_run, tmp_path):
    """--resume of a run at its last step: its validation of that step is not repeated in
    validations.jsonl or the summary's history."""
    import json

    run_dir = copy_of(saved_run, tmp_path)
    steps = lambda: [json.loads(x)["step"] for x in (run_dir / "validations.jsonl").open()]  # noqa: E731
    before = steps()
    assert before and before[-1] == 2
    assert Trainer(configured(run_dir), resume=True).run().step == 2
    assert steps() == before
    summary = json.loads((run_dir / "summary.json").read_text())
    assert [v["step"] for v in summary["validations"]] == before


def test_a_training_file_changed_since_the_run_cannot_resume(tmp_path):
    """The same config and paths, other lines in a training file: the saved run's place in
    its epoch means nothing there, so resuming is refused; the file put back, it resumes."""
    src, tgt = tmp_path / "train.de", tmp_path / "train.en"
    lines = lambda text: "".join(f"{text} {i}.\n" for i in range(40))  # noqa: E731
    src.write_text(lines("ein Hund läuft"), encoding="utf-8")
    tgt.write_text(lines("a dog runs"), encoding="utf-8")
    pair = {"src": str(src), "tgt": str(tgt)}
    train = {"train": pair, "dev": pair}
    cfg = config_from_dict({**TINY, "run_dir": str(tmp_path / "run"),
                            "data": {**TINY["data"], **train}})  # fmt: skip
    Trainer(cfg).run()
    tgt.write_text(lines("a cat sleeps"), encoding="utf-8")
    message = user_error(Trainer, cfg, resume=True)
    assert "training data differs from the saved run's" in message and "last.pt" in message
    tgt.write_text(lines("a dog runs"), encoding="utf-8")
    assert Trainer(cfg, resume=True).state.step == 2


def test_a_run_that_stopped_early_stays_stopped_when_resumed(tmp_path):
    """(A learning rate too small to change a translation: the second validation is no
    better than the first, and patience 1 stops the run there.)"""
    import json

    sets = ["train.max_steps=20", "train.valid_every=1", "train.patience=1", "train.lr=1e-9"]
    cfg = configured(tmp_path / "run", *sets)
    assert Trainer(cfg).run().step == 2
    resumed = Trainer(cfg, resume=True)
    assert resumed.run().step == 2 and resumed.stop.kind.value == "early_stopping"
    validations = (tmp_path / "run" / "validations.jsonl").read_text().splitlines()
    assert [json.loads(v)["step"] for v in validations] == [1, 2]


def test_a_checkpoint_without_training_state_cannot_resume(saved_run, tmp_path):
    run_dir = copy_of(saved_run, tmp_path)
    shutil.copy(run_dir / "best.pt", run_dir / "last.pt")
    message = user_error(Trainer, configured(run_dir), resume=True)
    assert "holds no training state" in message and "last.pt" in message


def test_two_processes_resume_exactly_each_with_its_own_random_state(tmp_path):
    straight = torchrun(tmp_path, tmp_path / "straight", 8)
    half = torchrun(tmp_path, tmp_path / "halves", 4)
    assert half.processes == 2
    assert not torch.equal(half.rng[0]["torch"], half.rng[1]["torch"])
    resumed = torchrun(tmp_path, tmp_path / "halves", 8, resume=True)
    assert resumed.progress["step"] == straight.progress["step"] == 8
    for name, weight in straight.model.items():
        assert torch.equal(weight, resumed.model[name]), name
    assert straight.ema["updates"] == resumed.ema["updates"] == 8
    for name, weight in straight.ema["weights"].items():
        assert torch.equal(weight, resumed.ema["weights"][name]), name
    # one process cannot take over the data shares of two
    cfg = config_from_dict({**DDP, "run_dir": str(tmp_path / "halves")})
    message = user_error(Trainer, cfg, resume=True)
    assert "saved by 2 process(es) and this run has 1" in message


def _moments_transposed(ts):
    moments = ts["optimizer"]["state"].values()
    state = next(
        s for s in moments if s["exp_avg"].dim() == 2 and len(set(s["exp_avg"].shape)) == 2
    )
    state["exp_avg"] = state["exp_avg"].t().contiguous()


DAMAGE = {
    "optimizer": _moments_transposed,
    "progress": lambda ts: ts["progress"].update(step="12"),
    "rng": lambda ts: ts["rng"].update(torch="not a state"),
}


@pytest.mark.parametrize("key", sorted(DAMAGE))
def test_a_training_state_of_another_shape_is_named_not_a_traceback(saved_run, tmp_path, key):
    """An edited last.pt: each part of its train_state is checked as it is restored, so a
    value torch would take and fail on later is refused at once, naming the key."""
    run_dir = copy_of(saved_run, tmp_path)
    raw = torch.load(run_dir / "last.pt", weights_only=False)
    DAMAGE[key](raw["train_state"])
    torch.save(raw, run_dir / "last.pt")
    message = user_error(Trainer, configured(run_dir), resume=True)
    assert message.startswith(f"cannot resume {run_dir / 'last.pt'}: key 'train_state.{key}'")


def test_a_best_pt_newer_than_last_pt_is_kept_until_beaten(saved_run, tmp_path, caplog):
    """A kill between a validation that wrote best.pt and the next last.pt: last.pt's record
    knows no validation yet, best.pt holds one (made unbeatable here). The resumed run keeps
    best.pt and its score instead of replacing it with its next, worse validation."""
    run_dir = copy_of(saved_run, tmp_path)
    last, best = torch.load(run_dir / "last.pt"), torch.load(run_dir / "best.pt")
    progress = last["train_state"]["progress"]
    progress.update(best_bleu=-1.0, best_loss=float("inf"), best_step=0, history=[])
    best["train_state"]["progress"]["best_bleu"] = 99.0
    torch.save(last, run_dir / "last.pt")
    torch.save(best, run_dir / "best.pt")
    with caplog.at_level(logging.INFO, logger="translator"):
        summary = Trainer(configured(run_dir, "train.max_steps=4"), resume=True).run()
    assert summary.best_step == 2 and summary.best_bleu == 99.0
    assert torch.load(run_dir / "best.pt")["train_state"]["progress"]["best_step"] == 2
    assert "best.pt holds the validation of step 2" in caplog.text


def test_the_first_log_line_after_a_resume_averages_the_steps_it_would_have(tmp_path):
    """Logs every 4 steps; one run stops at step 6, in the middle of the line for steps 5
    to 8, and is resumed: its line at step 8 is the uninterrupted run's, as are the others."""
    logs = lambda run_dir, *more: configured(run_dir, "train.log_every=4", *more)  # noqa: E731
    straight = Trainer(logs(tmp_path / "straight", "train.max_steps=12")).run()
    Trainer(logs(tmp_path / "halves", "train.max_steps=6")).run()
    resumed = Trainer(logs(tmp_path / "halves", "train.max_steps=12"), resume=True).run()
    assert [step for step, _ in straight.losses] == [4, 8, 12]
    assert resumed.losses == straight.losses
