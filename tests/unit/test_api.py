"""translator.api, the library's interface: what a call gives equals what the engine gives
for the same DecodeRequest, per-call settings stay with their call (threads included), and
a mistake is a one-line UserError naming the setting."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import pytest
from checkpoints import multilingual_checkpoint, needs_ct2, untrained
from util import user_error

from translator import api
from translator.engines.load import load_engine

LINES = ["ein hund läuft", "zwei männer spielen", "eine frau singt"]


@pytest.fixture(scope="module")
def path(tmp_path_factory):
    return untrained(tmp_path_factory.mktemp("api"))


@pytest.fixture(scope="module")
def model(path):
    return api.load(path)


@pytest.fixture(scope="module")
def engine(path):
    return load_engine(path)


def best(engine, lines, **changes):
    request = engine.request(decode=engine.cfg.decode.replace(**changes))
    return [hyps[0].text for hyps in engine.translate(lines, request)]


def test_a_text_gives_a_text_and_a_list_a_list(model, engine):
    assert model.translate(LINES) == best(engine, LINES)
    assert model.translate(LINES[0]) == best(engine, LINES[:1])[0]
    assert model.translate([]) == []
    assert repr(model) == "Model(transformer, pytorch, de-en)"
    assert model.translate(LINES, beam=1) == best(engine, LINES, beam=1)


def test_settings_of_one_call_leave_the_model_and_other_calls_alone(model, engine):
    own = model.engine.cfg.decode
    wanted = {beam: best(engine, LINES, beam=beam, max_len_b=3) for beam in (1, 2, 4)}
    with ThreadPoolExecutor(3) as pool:
        got = list(pool.map(lambda b: model.translate(LINES, beam=b, max_len_b=3), [1, 2, 4] * 4))
    assert got == [wanted[b] for b in (1, 2, 4)] * 4
    assert model.engine.cfg.decode == own


def test_hypotheses_keep_the_nbest_with_their_columns(model):
    hyps = model.hypotheses(LINES[0], nbest=3, alignments=True, confidence=True)
    assert len(hyps) == 3
    assert [h.score for h in hyps] == sorted((h.score for h in hyps), reverse=True)
    assert all(h.alignment is not None and 0 < h.confidence <= 1 for h in hyps)
    assert [len(x) for x in model.hypotheses(LINES, nbest=2)] == [2, 2, 2]


def test_guides_reach_the_search(model, engine):
    request = engine.request()
    guided = request.guided(engine.tokenizer, LINES, engine.max_target, ["a dog"] * 3)
    assert model.translate(LINES, prefix="a dog") == [
        h[0].text for h in engine.translate(LINES, guided)
    ]
    assert all(t.startswith("a dog") for t in model.translate(LINES, prefix="a dog"))
    assert all("street" in t for t in model.translate(LINES, constraints=["street"]))
    found = model.translate(LINES, terms={"hund": "street"})  # only the first has the term
    assert "street" in found[0]
    assert found[1:] == model.translate(LINES[1:])


def test_seeded_sampling_repeats_per_call(model):
    first = model.translate(LINES, sampling="topk:50", seed=7)
    assert model.translate(LINES, sampling="topk:50", seed=7) == first
    others = [model.translate(LINES, sampling="topk:50", seed=s) for s in range(8, 12)]
    assert any(o != first for o in others)


def test_score_is_the_engines(model, engine):
    targets = model.translate(LINES)
    assert model.score(LINES, targets) == engine.score(LINES, targets, engine.request())
    assert model.score(LINES[0], targets[0]) == model.score(LINES[:1], targets[:1])[0]
    assert "2 sources and 1 targets" in user_error(model.score, LINES[:2], targets[:1])
    said = user_error(model.score, LINES[0], targets[:1])
    assert "the source is a string and the target a list" in said


def test_documents_keep_their_markup(model, tmp_path):
    html = "<p>ein hund läuft. <b>zwei männer</b> spielen.</p>"
    out = model.translate_document(html, format="html")
    assert isinstance(out, str) and out.startswith("<p>") and "<b>" in out
    page = tmp_path / "page.html"
    page.write_text(html, encoding="utf-8")
    assert model.translate_document(page) == out.encode("utf-8")
    assert model.translate_document(html.encode(), format="html") == out.encode("utf-8")
    text = model.translate_document("ein hund läuft.\n\neine frau singt.\n", format="text")
    assert text.count("\n\n") == 1
    assert "give format=" in user_error(model.translate_document, html)
    assert "takes no nbest" in user_error(model.translate_document, page, nbest=2)
    assert "no such file" in user_error(model.translate_document, tmp_path / "gone.html")
    renamed = tmp_path / "report.doc"  # (a Word document under another extension)
    renamed.write_bytes(b"PK\x03\x04" + bytes(range(256)))
    said = user_error(model.translate_document, renamed)
    assert "a zip file (a Word document?), not text (give format=docx)" in said, said


@pytest.mark.parametrize(
    "settings, needle",
    [
        ({"beam": 0}, "key 'beam' must be"),
        ({"beem": 3}, "did you mean 'beam'"),
        ({"decode": {}}, "unknown key 'decode'"),
        ({"nbest": 0}, "nbest: give a whole number from 1 to 1000"),
        ({"nbest": "3"}, "nbest: give a whole number"),
        ({"nbest": True}, "nbest: give a whole number"),
        ({"alignments": 1}, "alignments: give True or False"),
        ({"sampling": "top:3"}, "topk:K"),
        ({"sampling": 5}, "sampling: give a string"),
        ({"sampling": "topk:3", "seed": -1}, "seed: give a whole number from 0 to 4294967295"),
        ({"sampling": "topk:3", "seed": 1.5}, "seed: give a whole number"),
        ({"sampling": "topk:3", "temperature": "0.8"}, "temperature: give a number"),
        ({"sampling": "topk:3", "temperature": float("inf")}, "temperature: give a number"),
        ({"beam": 4, "sampling": "topk:3"}, "exclude each other"),
        ({"tgt_lang": "fr"}, "tgt_lang fr"),
        ({"tgt_lang": 5}, "tgt_lang: give a string"),
        ({"constraints": [["a"], ["b"]]}, "2 lists for 3 texts"),
        ({"constraints": ["a", ["b"], None]}, "constraints: give a phrase, a list of phrases"),
        ({"constraints": [5]}, "constraints: give a phrase"),
        ({"prefix": ["a"]}, "1 prefixes for 3 lines"),
        ({"prefix": 5}, "prefix: give a text"),
        ({"prefix": " "}, "prefix"),
        ({"terms": [("hund", "dog")]}, "terms: give a glossary"),
        ({"terms": {"hund": 5}}, "terms: give a glossary"),
        ({"terms_ignore_case": True}, "terms_ignore_case goes with terms"),
    ],
)
def test_a_bad_setting_is_one_line_naming_it(model, settings, needle):
    message = user_error(model.hypotheses, LINES, **settings)
    assert needle in message and "--" not in message  # keywords, not the CLI's options


def test_errors_of_the_code_shared_with_the_command_line_name_keywords(model, path):
    said = user_error(model.translate, "Ein Hund.", beam=4, sampling="topk:3")
    assert said.startswith("beam 4 and sampling exclude each other"), said
    said = user_error(model.translate, "Ein Hund.", temperature=0.5)
    assert said.startswith("temperature and seed go with sampling"), said
    assert user_error(api.load, path, quantize="int4").startswith("quantize int4:")
    said = user_error(model.translate_document, "x", format="pdf")
    assert said.startswith("format pdf: not one of"), said


def test_a_phrase_is_one_constraint_for_every_text(model):
    assert model.translate(LINES, constraints="street") == model.translate(
        LINES, constraints=[["street"]] * 3
    )
    assert model.translate(LINES, constraints=[None, ["street"], []])[1] == model.translate(
        LINES[1], constraints=["street"]
    )


def test_score_and_documents_refuse_what_they_cannot_use(model, path):
    assert "score() takes no beam" in user_error(model.score, LINES, LINES, beam=2)
    assert "takes no seed" in user_error(model.translate_document, "x", format="text", seed=1)
    assert "load(): give a checkpoint" in user_error(api.load, None)
    assert "device: give a string" in user_error(api.load, path, device=None)
    assert "device is 'gpu'" in user_error(api.load, path, device="gpu")


def test_a_text_must_be_a_string(model):
    assert "a string or a list of strings" in user_error(model.translate, [b"bytes"])
    said = user_error(model.translate, "Ein \ud800 Hund")
    assert said.startswith("text: not valid Unicode (lone surrogate U+D800)")
    said = user_error(model.score, ["a", "b"], ["a", "b\udfff"])
    assert said.startswith("target 2 of the list: not valid Unicode")


def test_a_missing_model_names_the_import(tmp_path):
    message = user_error(api.load, "Helsinki-NLP/opus-mt-de-en")
    assert "opus-mt-de-en: no such checkpoint" in message and "translator import" in message
    assert "no such checkpoint" in user_error(api.load, [tmp_path / "a.pt", tmp_path / "b.pt"])


def test_target_languages_per_call(tmp_path):
    path = multilingual_checkpoint(tmp_path / "multi.pt", ["de-en", "de-fr"])
    assert "tgt_lang" in user_error(api.load(path).translate, LINES)  # none here or there
    assert api.load(path).translate(LINES, tgt_lang="fr") == api.load(
        path, tgt_lang="fr"
    ).translate(LINES)
    model = api.load(path, tgt_lang="en")
    for lang in ("en", "fr"):
        engine = load_engine(path, tgt_lang=lang)
        assert model.translate(LINES, tgt_lang=lang) == best(engine, LINES)
    assert model.translate(LINES) == model.translate(LINES, tgt_lang="en")


def test_the_guides_example_runs(path, tmp_path, monkeypatch, capsys):
    """docs/guide.md's "From Python" example, run as written on a model at its path."""
    docx = pytest.importorskip("docx")
    from util import ROOT

    guide = (ROOT / "docs" / "guide.md").read_text(encoding="utf-8")
    section = guide.split("## From Python\n", 1)[1].split("\n## ", 1)[0]
    block = section.split("\n\n", 1)[1].split("\n- ", 1)[0]  # between paragraph and list
    code = "\n".join(line[4:] for line in block.splitlines())
    assert "api.load(" in code
    monkeypatch.chdir(tmp_path)
    (tmp_path / "runs" / "demo").mkdir(parents=True)
    (tmp_path / "runs" / "demo" / "best.pt").symlink_to(path)
    page = docx.Document()
    page.add_paragraph("Ein Hund läuft.")
    page.save("report.docx")
    exec(compile(code, "guide.md", "exec"), {})
    assert len(capsys.readouterr().out.splitlines()) == 3  # the three hypotheses printed


@needs_ct2
def test_an_export_refuses_terms_whatever_the_text(path, tmp_path):
    from translator.engines.export import export_checkpoint

    _, folder = export_checkpoint(path, "ctranslate2", "float32", tmp_path / "ct2")
    export = api.load(folder)
    assert export.translate(LINES) == api.load(path).translate(LINES)
    for text in ("ein hund", "nothing in the glossary"):
        assert "terms: an exported" in user_error(export.translate, text, terms={"hund": "dog"})
    assert "sampling: a ctranslate2 model" in user_error(export.translate, "x", sampling="topk:2")
