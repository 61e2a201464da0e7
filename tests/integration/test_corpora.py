"""Training on several corpora (data.corpora): each prepared on its own and left alone when
another is added, exact --resume, tags known to translate, and one-line errors for a corpus
that is missing or empty and for a tag that the text holds."""

import pytest
import torch
from util import tiny_config, user_error

from translator.config import config_from_dict
from translator.data.corpora import prepare_corpora
from translator.data.demo import demo_splits
from translator.engines.load import load_engine
from translator.train.trainer import Trainer


def write(folder, name, pairs):
    for side, lang in ((0, "de"), (1, "en")):
        path = folder / f"{name}.{lang}"
        path.write_text("".join(p[side] + "\n" for p in pairs), encoding="utf-8")
    return {"src": str(folder / f"{name}.de"), "tgt": str(folder / f"{name}.en")}


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    folder = tmp_path_factory.mktemp("corpora")
    splits = demo_splits(90, 10, 10, seed=3)
    return {
        "genuine": write(folder, "genuine", splits["train"][:60]),
        "synthetic": write(folder, "synthetic", splits["train"][60:]),
        "more": write(folder, "more", splits["train"][:20]),
        "empty": write(folder, "empty", []),
        "dev": write(folder, "dev", splits["dev"]),
    }


def configured(files, run_dir, corpora, *overrides):
    raw = tiny_config(
        run_dir=str(run_dir),
        data={"corpora": corpora, "dev": files["dev"]},
        train={"batch_tokens": 1500},
    )
    raw["data"].pop("dataset")
    return config_from_dict(raw, overrides=list(overrides))


def two(files):
    return [
        {"train": files["genuine"], "weight": 1},
        {"train": files["synthetic"], "weight": 2, "tag": "<bt>"},
    ]


@pytest.mark.parametrize("alpha", ["null", "0.3"])
def test_resume_with_several_corpora_continues_exactly(files, tmp_path, alpha):
    """With subword sampling too: each batch's draw is named by its place in the run."""
    sampling = f"tokenizer.sampling_alpha={alpha}"
    straight = Trainer(
        configured(files, tmp_path / "a", two(files), "train.max_steps=10", sampling)
    )
    straight.run()
    assert straight.state.epoch >= 1  # the run crosses an epoch: the next draw matters
    if alpha != "null":  # training batches are drawn, dev stays as the tokenizer cuts it
        assert type(straight.data.batches.ids.parts[0]).__name__ == "SampledIds"
        dev = straight.data.devs[0].batches.ids
        src = [dev.src[dev.src_offsets[i] : dev.src_offsets[i + 1]].tolist() for i in range(3)]
        assert src == straight.tokenizer.encode_src([s for s, _ in straight.data.devs[0].pairs[:3]])
    Trainer(configured(files, tmp_path / "b", two(files), "train.max_steps=5", sampling)).run()
    cfg = configured(files, tmp_path / "b", two(files), "train.max_steps=10", sampling)
    resumed = Trainer(cfg, resume=True)
    resumed.run()
    a, b = straight.model.state_dict(), resumed.model.state_dict()
    assert all(torch.equal(a[name], b[name]) for name in a)
    engine = load_engine(tmp_path / "a" / "last.pt", "cpu", tag="<bt>")
    tag_id = engine.tokenizer.src.piece_to_id("<bt>")
    assert engine.source_prefix == (tag_id,) and tag_id in engine.model.never_output
    assert engine.tokenizer.src.id_to_piece(tag_id) == "<bt>"
    assert len(engine.translate(["Ein Hund läuft."])) == 1
    assert "its tags: <bt>" in user_error(load_engine, tmp_path / "a" / "last.pt", tag="<ft>")


def test_adding_a_corpus_leaves_the_others_prepared(files, tmp_path, monkeypatch):
    monkeypatch.setenv("TRANSLATOR_CACHE", str(tmp_path / "cache"))
    before = prepare_corpora(configured(files, tmp_path / "r", two(files)), None, False)
    stamps = [(p.folder / "manifest.json").stat().st_mtime_ns for p in before]
    three = [*two(files), {"train": files["more"], "weight": 0.5}]
    after = prepare_corpora(configured(files, tmp_path / "r", three), None, False)
    assert [p.folder for p in after[:2]] == [p.folder for p in before]
    assert [(p.folder / "manifest.json").stat().st_mtime_ns for p in after[:2]] == stamps
    assert after[2].tokenizer.fingerprint() == before[0].tokenizer.fingerprint()


def test_a_missing_or_empty_corpus_and_a_tag_in_the_text_are_one_line_errors(files, tmp_path):
    missing = [
        *two(files),
        {"train": {"src": str(tmp_path / "no.de"), "tgt": files["more"]["tgt"]}},
    ]
    message = user_error(prepare_corpora, configured(files, tmp_path / "r", missing), None, False)
    assert "no.de" in message
    empty = [*two(files), {"train": files["empty"]}]
    message = user_error(prepare_corpora, configured(files, tmp_path / "r", empty), None, False)
    assert "data.corpora[2]" in message and "empty.de" in message
    tagged = [{"train": files["genuine"], "tag": "Hund"}]
    message = user_error(prepare_corpora, configured(files, tmp_path / "r", tagged), None, False)
    assert "tag 'Hund' occurs in the training text" in message
