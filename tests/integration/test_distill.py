"""`translator distill` as a user runs it: the teacher's translations of its own training
sources, in files a student's config trains on."""

from util import tiny_config

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
