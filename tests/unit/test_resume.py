"""--resume: the config changes it refuses and the ones it allows, files it cannot resume
from, and every process's own random state under torchrun (2 CPU processes, gloo)."""

from translator.config.diff import config_changes, describe_changes
from translator.train.resume import resumable


def test_config_changes_compare_key_paths_whatever_the_sections_hold():
    saved = {"seed": 1, "model": {"type": "lstm", "lstm": {"hidden": 8}}, "train": {"lr": 1.0}}
    given = {"seed": 1, "model": {"type": "rnn", "rnn": {"d": 4}}, "train": {"lr": 2.0}}
    changes = config_changes(saved, given)
    assert changes == {
        "model.lstm.hidden": (8, ...),
        "model.rnn.d": (..., 4),
        "model.type": ("lstm", "rnn"),
        "train.lr": (1.0, 2.0),
    }
    text = describe_changes(changes)
    assert "model.lstm.hidden (8 -> unset)" in text and 'model.type ("lstm" -> "rnn")' in text
    assert [k for k in changes if resumable(k)] == ["train.lr"]
    assert resumable("decode.beam") and not resumable("decoder.beam")


def test_test_files_may_change_on_resume_but_training_data_may_not():
    from translator.train.resume import resumable

    # eval alone reads the test split, so naming test files later continues the run
    assert resumable("data.test") and resumable("data.test.src") and resumable("data.test_split")
    assert not resumable("data.train.src") and not resumable("data.dev.tgt")
    assert not resumable("data.testing")


def test_a_change_inside_a_list_of_sections_names_its_entry_and_key():
    corpus = {"train": {"src": "a.de", "tgt": "a.en"}, "weight": 1.0}
    saved = {"data": {"corpora": [corpus, {**corpus, "weight": 1.0}], "langs": ["de", "en"]}}
    given = {"data": {"corpora": [corpus, {**corpus, "weight": 3.0}], "langs": ["de", "fr"]}}
    changes = config_changes(saved, given)
    # one entry's weight, not both whole lists; a list of plain values stays one key
    assert changes == {
        "data.corpora[1].weight": (1.0, 3.0),
        "data.langs": (["de", "en"], ["de", "fr"]),
    }
    shorter = config_changes(saved, {"data": {"corpora": [corpus], "langs": ["de", "en"]}})
    assert set(shorter) == {
        "data.corpora[1].train.src",
        "data.corpora[1].train.tgt",
        "data.corpora[1].weight",
    }
    assert not any(resumable(k) for k in changes)
