"""One model for several directions (data.directions): target-language tags in the sources
and the vocabulary, validation per direction with best.pt on their mean, and choosing the
language in translate and eval, with one-line errors for a missing or unknown one."""

import json

import pytest
from util import assert_user_error, multiway_folder, tiny_config

from translator.config import config_from_dict
from translator.engines.load import load_engine
from translator.train.trainer import Trainer

EN_X = ["en-de", "en-fr", "en-cs"]


def configured(folder, run_dir, directions, *overrides):
    raw = tiny_config(
        run_dir=str(run_dir),
        data={"dir": str(folder), "directions": directions},
        train={"max_steps": 12, "valid_every": 6},
    )
    raw["data"].pop("dataset")
    return config_from_dict(raw, overrides=list(overrides))


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    return multiway_folder(tmp_path_factory.mktemp("multiway"))


@pytest.fixture(scope="module")
def en_x(folder, tmp_path_factory):
    """A run on en->{de,fr,cs}: its trainer after training."""
    run_dir = tmp_path_factory.mktemp("run") / "en_x"
    trainer = Trainer(configured(folder, run_dir, EN_X, "train.tensorboard=true"))
    trainer.run()
    return trainer


def test_each_source_begins_with_the_tag_of_its_target_language(en_x):
    tokenizer, ids = en_x.tokenizer, en_x.data.batches.ids
    tags = {lang: tokenizer.src.piece_to_id(f"<2{lang}>") for lang in ("de", "fr", "cs")}
    assert all(tokenizer.src.id_to_piece(i) == f"<2{lang}>" for lang, i in tags.items())
    assert set(tags.values()) <= set(en_x.model.never_output)
    for corpus, lang in enumerate(("de", "fr", "cs")):
        rows = list(range(ids.bases[corpus], ids.bases[corpus] + 3))
        src, _ = ids.draw(rows)
        assert [s[0] for s in src] == [tags[lang]] * 3
        assert all(tags[lang] not in s[1:] for s in src)
        batch = ids.collate(rows)
        assert batch.src[:, 0].tolist() == [tags[lang]] * 3


def test_validation_scores_each_direction_and_best_follows_their_mean(en_x):
    run = en_x.run_dir.path
    summary = json.loads((run / "summary.json").read_text())
    lines = (run / "validations.jsonl").read_text().splitlines()
    entries = [json.loads(line) for line in lines]
    assert [e["step"] for e in entries] == [6, 12]
    for entry in entries:
        per = entry["directions"]
        assert list(per) == EN_X
        assert entry["dev_bleu"] == pytest.approx(sum(d["dev_bleu"] for d in per.values()) / 3)
        assert entry["dev_loss"] == pytest.approx(sum(d["dev_loss"] for d in per.values()) / 3)
    best = max(entries, key=lambda e: e["dev_bleu"])  # the first of equals: only a rise counts
    assert summary["best_step"] == best["step"]
    assert summary["best_dev_bleu"] == pytest.approx(best["dev_bleu"], abs=0.01)
    assert list(summary["best_dev_bleu_by_direction"]) == EN_X
    reader = pytest.importorskip("tensorboard.backend.event_processing.event_accumulator")
    events = reader.EventAccumulator(str(run / "tensorboard"))
    events.Reload()
    for name in EN_X:
        board = {e.step: e.value for e in events.Scalars(f"dev/bleu_{name}")}
        by_step = {e["step"]: e["directions"][name]["dev_bleu"] for e in entries}
        assert board == pytest.approx(by_step, abs=1e-4)
    # each direction's dev set is its own: the references of en-de are German
    dev = {d.name: d.pairs for d in en_x.data.devs}
    assert dev["en-de"][0][0] == dev["en-fr"][0][0] and dev["en-de"][0][1] != dev["en-fr"][0][1]


def test_translate_and_eval_take_the_target_language(en_x, folder, here):
    best = str(en_x.run_dir.best)
    engine = load_engine(best, "cpu", tgt_lang="fr")
    assert engine.source_prefix == (engine.tokenizer.src.piece_to_id("<2fr>"),)
    missing = here("translate", "--checkpoint", best, "A dog runs.")
    assert_user_error(missing, "--tgt-lang", "de, fr, cs")
    unknown = here("translate", "--checkpoint", best, "--tgt-lang", "it", "A dog runs.")
    assert_user_error(unknown, "--tgt-lang it", "de, fr, cs")
    done = here("translate", "--checkpoint", best, "--tgt-lang", "cs", "A dog runs.")
    assert done.returncode == 0, done.stderr[-2000:]
    scored = here("eval", "--checkpoint", best, "--tgt-lang", "fr", "--json")
    assert scored.returncode == 0, scored.stderr[-2000:]
    result = json.loads(scored.stdout)
    assert result["direction"] == "en-fr" and result["n"] == 10
    hyps = [r[0].text for r in engine.translate([s for s, _ in en_x.data.devs[1].pairs[:1]])]
    assert len(hyps) == 1


def test_many_sources_and_zero_shot_directions(folder, tmp_path, here):
    """A de<->en, fr<->en model: eval needs --src-lang for English targets and scores the
    de->fr direction it never saw; one target language alone needs no tag."""
    zero = configured(folder, tmp_path / "zs", ["de-en", "en-de", "fr-en", "en-fr"])
    Trainer(zero.replace(train=zero.train.replace(max_steps=2))).run()
    best = str(tmp_path / "zs" / "best.pt")
    assert_user_error(
        here("eval", "--checkpoint", best, "--tgt-lang", "en"), "--src-lang", "de, en, fr"
    )
    shot = here("eval", "--checkpoint", best, "--src-lang", "de", "--tgt-lang", "fr", "--json")
    assert shot.returncode == 0, shot.stderr[-2000:]
    assert json.loads(shot.stdout)["direction"] == "de-fr"
    many = configured(folder, tmp_path / "x_en", ["de-en", "fr-en"], "train.max_steps=2")
    trainer = Trainer(many)
    trainer.run()
    assert many.data.tags == [] and trainer.model.never_output == ()
    assert load_engine(str(tmp_path / "x_en" / "best.pt"), "cpu").source_prefix == ()


def test_filter_takes_the_target_language_and_distill_names_its_limit(en_x, folder, tmp_path, here):
    """filter scores with a model of several targets through --tgt-lang; distill, which
    takes a teacher of one target, says so rather than naming an option it has not."""
    best = str(en_x.run_dir.best)
    outs = ["--out-src", str(tmp_path / "k.en"), "--out-tgt", str(tmp_path / "k.de")]
    pairs = ["--src", str(folder / "dev.en"), "--tgt", str(folder / "dev.de")]
    kept = here("filter", "--checkpoint", best, *pairs, *outs, "--keep", "0.5",
                "--tgt-lang", "de")  # fmt: skip
    assert kept.returncode == 0, kept.stderr
    assert len((tmp_path / "k.de").read_text().splitlines()) == 5
    refused = here("distill", "--checkpoint", best, "--out", str(tmp_path / "d"))
    assert_user_error(refused, "distill takes a teacher of one target language", "de, fr, cs")
