"""translator distill (decode/distill.py): a teacher's translations of a config's training
sources, aligned line by line, resumable, and the n-best pick by sentence BLEU."""

import json

import pytest
import yaml

from translator.config import config_from_dict
from translator.decode import distill, translate_io
from translator.decode.request import DecodeRequest
from translator.decode.translator import Translation
from translator.errors import UserError


class Teacher:
    """Translates by upper-casing (its K best: the line, then variants), and stops like
    Ctrl-C after `stop_after` chunks."""

    def __init__(self, cfg, stop_after=None):
        self.cfg, self.source_prefix = cfg, ()
        self.stop_after, self.lines = stop_after, 0

    def translate(self, lines, request, progress=False):
        if self.stop_after is not None and self.lines >= self.stop_after:
            raise KeyboardInterrupt
        self.lines += len(lines)
        nbest = request.nbest
        return [
            [Translation(t, -k) for k, t in enumerate([s.upper(), f"{s} x", s.lower()][:nbest])]
            for s in lines
        ]


@pytest.fixture
def corpus(tmp_path, monkeypatch):
    monkeypatch.setattr(translate_io, "FILE_CHUNK", 4)
    src, tgt = tmp_path / "c.de", tmp_path / "c.en"
    src.write_text("".join(f"Satz {i}\n" for i in range(10)), encoding="utf-8")
    tgt.write_text("".join(f"satz {i}\n" for i in range(10)), encoding="utf-8")
    tsv = tmp_path / "more.tsv"
    tsv.write_text("de\ten\nNoch ein Satz\tone more\n", encoding="utf-8")
    raw = {"data": {"train": {"src": str(src), "tgt": str(tgt)}}}
    return config_from_dict(raw), raw, tsv


def run(cfg, out, teacher=None, nbest=1):
    teacher = teacher or Teacher(cfg)
    dc = cfg.decode.replace(beam=max(cfg.decode.beam, nbest))
    return distill.distill_corpora(teacher, cfg, out, dc, nbest, ["teacher"])


def test_every_source_line_gets_the_teachers_translation_once(corpus, tmp_path):
    cfg, _, _ = corpus
    with pytest.raises(KeyboardInterrupt):
        run(cfg, tmp_path / "d", Teacher(cfg, stop_after=8))
    assert not (tmp_path / "d" / "train.en").exists()  # never half written
    again = Teacher(cfg)
    (done,) = run(cfg, tmp_path / "d", again)
    assert again.lines == 2  # the first two chunks were not translated again
    assert done.tgt.read_text().splitlines() == [f"SATZ {i}" for i in range(10)]
    assert done.src.read_text().splitlines() == [f"Satz {i}" for i in range(10)]
    straight = run(cfg, tmp_path / "e")[0]
    assert straight.tgt.read_bytes() == done.tgt.read_bytes()
    once_more = Teacher(cfg)
    run(cfg, tmp_path / "d", once_more)
    assert once_more.lines == 0  # done is done
    assert done.entry() == f"{{train: {{src: {done.src}, tgt: {done.tgt}}}}}"


@pytest.mark.parametrize("damage", ["{not json", "[]", '{"lines": "10"}', "\udcff"])
def test_a_damaged_record_is_redone_not_a_traceback(corpus, tmp_path, damage, caplog):
    cfg, _, _ = corpus
    (done,) = run(cfg, tmp_path / "d")
    record = tmp_path / "d" / "train.json"
    record.write_bytes(damage.encode("utf-8", "surrogateescape"))
    again = Teacher(cfg)
    (redone,) = run(cfg, tmp_path / "d", again)
    assert "train.json is not a record distill wrote" in caplog.text
    assert again.lines == 10  # extracted and translated again, the same lines
    assert redone.tgt.read_text().splitlines() == [f"SATZ {i}" for i in range(10)]
    assert json.loads(record.read_text())["lines"] == 10


def test_the_nbest_pick_keeps_the_hypothesis_closest_to_the_reference(corpus, tmp_path):
    cfg, _, _ = corpus
    (done,) = run(cfg, tmp_path / "d", nbest=3)
    # the references are lower-cased: the third hypothesis matches them
    assert done.tgt.read_text().splitlines() == [f"satz {i}" for i in range(10)]
    assert not (tmp_path / "d" / "train.nbest.en").exists()
    assert distill.best_by_bleu(["a b c d", "a b c e"], "a b c e") == "a b c e"
    assert distill.best_by_bleu(["x y", "x y"], "q") == "x y"


def test_each_corpus_of_a_list_is_distilled_and_its_tag_kept_out(corpus, tmp_path):
    _, raw, tsv = corpus
    raw["data"]["corpora"] = [
        {"train": raw["data"].pop("train")},
        {"train": str(tsv), "tag": "<bt>", "weight": 2.5},
    ]
    cfg = config_from_dict(raw)
    first, second = run(cfg, tmp_path / "d")
    assert (first.name, second.name) == ("train0", "train1")
    assert second.tgt.read_text() == "NOCH EIN SATZ\n"
    # the entries printed to train on keep each corpus's weight and tag
    entries = yaml.safe_load(f"[{first.entry()}, {second.entry()}]")
    student = config_from_dict({"data": {"corpora": entries}}).data.corpora
    assert [(c.weight, c.tag) for c in student] == [(1.0, None), (2.5, "<bt>")]
    assert student[1].train.src == str(second.src)
    record = json.loads((tmp_path / "d" / "train1.json").read_text())
    assert record["lines"] == 1 and record["translated"]["nbest"] == 1


def test_a_teacher_of_other_languages_is_a_one_line_error(corpus, tmp_path):
    cfg, raw, _ = corpus
    teacher = Teacher(config_from_dict({"data": {"src_lang": "en", "tgt_lang": "de"}}))
    with pytest.raises(UserError, match="data.src_lang"):
        run(cfg, tmp_path / "d", teacher)


def test_an_exported_teacher_distills_its_own_training_data(tmp_path):
    """A CTranslate2 export is a teacher too; the config is the one it was trained with."""
    from checkpoints import needs_ct2, untrained

    pytest.importorskip("ctranslate2", reason=needs_ct2.kwargs["reason"])
    from translator.engines.export import export_checkpoint
    from translator.engines.load import load_engine

    _, folder = export_checkpoint(untrained(tmp_path), "ctranslate2", "int8", tmp_path / "x")
    teacher = load_engine(str(folder), "cpu")
    dc = teacher.cfg.decode.replace(beam=1, max_len_b=2)
    (done,) = distill.distill_corpora(teacher, teacher.cfg, tmp_path / "d", dc, 1, ["x"])
    sources = done.src.read_text(encoding="utf-8").splitlines()
    assert len(sources) == done.lines == teacher.cfg.data.demo_train
    outputs = done.tgt.read_text(encoding="utf-8").splitlines()
    assert outputs == [h[0].text for h in teacher.translate(sources, DecodeRequest(dc))]
