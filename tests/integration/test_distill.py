"""`translator distill` as a user runs it: the teacher's translations of its own training
sources, in files a student's config trains on."""

from util import assert_user_error, tiny_config

from translator.config import config_from_dict
from translator.train.trainer import Trainer


def test_a_student_trains_on_what_the_teacher_distilled(transformer, tmp_path, here):
    path, engine = transformer
    out = tmp_path / "distilled"
    result = here("distill", "--checkpoint", path, "--out", str(out), "--beam", "2",
                  "--device", "cpu")  # fmt: skip
    assert result.returncode == 0, result.stderr
    sources = (out / "train.de").read_text(encoding="utf-8").splitlines()
    outputs = (out / "train.en").read_text(encoding="utf-8").splitlines()
    references = (out / "train.ref.en").read_text(encoding="utf-8").splitlines()
    assert len(sources) == len(outputs) == len(references) == 400
    dc = engine.cfg.decode.replace(beam=2)
    assert [h[0].text for h in engine.translate(sources[:5], engine.request(decode=dc))] == outputs[
        :5
    ]
    assert outputs != references  # the teacher's words, not the corpus's
    assert f"data.corpora: [{{train: {{src: {out}/train.de, tgt: {out}/train.en}}}}]" in (
        result.stdout
    )
    student = tiny_config(
        run_dir=str(tmp_path / "student"),
        data={"corpora": [{"train": {"src": str(out / "train.de"), "tgt": str(out / "train.en")}}]},
        train={"max_steps": 2},
    )
    trainer = Trainer(config_from_dict(student))
    trainer.run()
    assert trainer.state.step == 2
    missing = here("distill", "--checkpoint", path, "--out", str(out), "--config", "no.yaml")
    assert missing.returncode == 2 and "no.yaml" in missing.stderr


def test_a_distilled_file_edited_since_is_neither_done_nor_replaced(three_steps, tmp_path, here):
    """Edits are found by the stamps in the output marker, as export finds them."""
    out = tmp_path / "d"
    args = ["distill", "--checkpoint", str(three_steps), "--out", str(out), "--device", "cpu",
            "--set", "data.demo_train=12"]  # fmt: skip
    for beam in ("1", "1", "2"):  # done, already done, and redone: no edit, no refusal
        result = here(*args, "--beam", beam)
        assert result.returncode == 0, result.stderr
    outputs = out / "train.en"
    with outputs.open("a", encoding="utf-8") as f:
        f.write("a line of mine\n")
    edited = outputs.read_bytes()
    for beam in ("2", "1"):  # the same settings, and others
        result = here(*args, "--beam", beam)
        assert_user_error(result, f"{outputs} was changed since translator wrote it",
                          "refusing to replace it")  # fmt: skip
        assert outputs.read_bytes() == edited


def test_a_set_key_distill_would_not_apply_is_refused(three_steps, tmp_path, here):
    """Only the config's training data is read: a decoding or model key is refused before
    any work, not left unused."""
    out = tmp_path / "d"
    args = ["distill", "--checkpoint", str(three_steps), "--out", str(out), "--device", "cpu"]
    for key in ("decode.beam=3", "model.d_model=8"):
        result = here(*args, "--set", key)
        assert_user_error(result, f"--set '{key}': distill applies only data.* keys")
        assert "--beam" in result.stderr and not out.exists()
