"""An imported MarianMT model through the commands that decode or score with it, in this
process: translate (beam, n-best, sampling, --prefix, --constraint, --terms,
--plot-attention), eval, score (against transformers' own log-probabilities), filter,
distill (as the teacher), export to int8 CTranslate2 with a vocabulary shortlist (and
translate with it) and serve (the app in this process, a translation POSTed)."""

import json

import pytest
import torch
from commandline import run_cli
from pretrained import demo_pairs, marian_folder
from util import guided_translate

from translator.engines.load import load_engine

transformers = pytest.importorskip("transformers")

LINES = 12  # of the demo test split
CAP = ["--device", "cpu", "--max-len-a", "0", "--max-len-b", "8"]


@pytest.fixture(scope="module")
def model(tmp_path_factory):
    """(folder, imported checkpoint, source file, reference file) shared by the module."""
    root = tmp_path_factory.mktemp("decoding")
    folder = marian_folder(root / "hf")
    from translator.pretrained import import_pretrained

    import_pretrained(str(folder), root / "imported.pt")
    pairs = demo_pairs()["test"][:LINES]
    src, ref = root / "test.de", root / "test.en"
    src.write_text("".join(f"{s}\n" for s, _ in pairs), encoding="utf-8")
    ref.write_text("".join(f"{t}\n" for _, t in pairs), encoding="utf-8")
    return folder, root / "imported.pt", src, ref


def lines_of(path) -> list[str]:
    return path.read_text(encoding="utf-8").splitlines()


def translated(capsys, ckpt, *args) -> list[str]:
    code, out, err = run_cli(capsys, "translate", "--checkpoint", ckpt, *CAP, *args)
    assert code == 0, err
    return out.splitlines()


def test_beam_and_nbest_give_the_engines_own_ranked_translations(model, capsys):
    _, ckpt, src, _ = model
    sources = lines_of(src)
    got = translated(capsys, ckpt, "--beam", "3", "--nbest", "3", "--input", src)
    assert len(got) == 3 * LINES
    engine = load_engine(ckpt, device="cpu")
    dc = engine.cfg.decode.replace(beam=3, max_len_a=0.0, max_len_b=8)
    want = guided_translate(engine, sources, decode=dc, nbest=3)
    rows = [line.split("\t") for line in got]
    assert [(int(n), t) for n, _, t in rows] == [
        (i, h.text) for i, hs in enumerate(want) for h in hs
    ]
    for i in range(LINES):
        scores = [float(s) for _, s, _ in rows[3 * i : 3 * i + 3]]
        assert scores == sorted(scores, reverse=True), scores
    assert translated(capsys, ckpt, "--beam", "3", "--input", src) == [h[0].text for h in want]


def test_sampling_follows_its_seed(model, capsys):
    _, ckpt, src, _ = model
    draw = ["--sampling", "topk:20", "--input", src]
    first = translated(capsys, ckpt, *draw, "--seed", "1")
    assert len(first) == LINES
    assert translated(capsys, ckpt, *draw, "--seed", "1") == first
    assert translated(capsys, ckpt, *draw, "--seed", "2") != first


def test_prefix_constraint_and_terms_hold_in_every_output(model, tmp_path, capsys):
    _, ckpt, src, _ = model
    sources = lines_of(src)
    for line in translated(capsys, ckpt, "--prefix", "Ein Hund", "--input", src):
        assert line.startswith("Ein Hund"), line
    for line in translated(capsys, ckpt, "--beam", "3", "--constraint", "Katze", "--input", src):
        assert "Katze" in line, line
    terms = tmp_path / "terms.tsv"
    term = next(w for w in sources[0].split() if len(w) > 3)
    terms.write_text(f"{term}\tZebra\n", encoding="utf-8")
    outputs = translated(capsys, ckpt, "--beam", "3", "--terms", terms, "--input", src)
    found = [("Zebra" in out) for s, out in zip(sources, outputs) if term in s]
    assert found and all(found), (term, outputs)


def test_plot_attention_draws_a_png(model, tmp_path, capsys):
    _, ckpt, src, _ = model
    png = tmp_path / "attention.png"
    translated(capsys, ckpt, "--plot-attention", png, lines_of(src)[0])
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_eval_scores_its_own_translations(model, tmp_path, capsys):
    import sacrebleu

    _, ckpt, src, ref = model
    hyps = tmp_path / "hyps.en"
    args = ["eval", "--checkpoint", ckpt, *CAP, "--beam", "2", "--src", src, "--ref", ref]
    code, out, err = run_cli(capsys, *args, "--json", "--output", hyps)
    assert code == 0, err
    report = json.loads(out.splitlines()[-1])
    assert report["n"] == LINES and report["beam"] == 2
    bleu = sacrebleu.corpus_bleu(lines_of(hyps), [lines_of(ref)]).score
    assert report["bleu"] == pytest.approx(bleu, abs=0.01)
    assert lines_of(hyps) == translated(capsys, ckpt, "--beam", "2", "--input", src)


def test_score_gives_transformers_log_probabilities(model, capsys):
    folder, ckpt, src, ref = model
    code, out, err = run_cli(capsys, "score", "--checkpoint", ckpt, "--src", src, "--tgt", ref)
    assert code == 0, err
    totals = [float(line.split("\t")[0]) for line in out.splitlines()]
    assert len(totals) == LINES
    hf = transformers.MarianMTModel.from_pretrained(folder).eval()
    tok = transformers.MarianTokenizer.from_pretrained(folder)
    for total, s, t in zip(totals, lines_of(src), lines_of(ref)):
        batch = tok([s], text_target=[t], return_tensors="pt")
        with torch.no_grad():
            logits = hf(**batch).logits  # the labels shifted right from Marian's start
        logp = torch.log_softmax(logits.float(), -1).gather(2, batch["labels"][..., None])
        assert total == pytest.approx(float(logp.sum()), abs=1e-3), (s, t)


def test_filter_keeps_the_best_scored_pairs(model, tmp_path, capsys):
    _, ckpt, src, ref = model
    out_src, out_tgt, scores = tmp_path / "kept.de", tmp_path / "kept.en", tmp_path / "scores"
    args = ["filter", "--checkpoint", ckpt, "--device", "cpu", "--src", src, "--tgt", ref]
    args += ["--out-src", out_src, "--out-tgt", out_tgt, "--keep", "0.5", "--scores", scores]
    code, _, err = run_cli(capsys, *args)
    assert code == 0, err
    values = [float(v) for v in lines_of(scores)]
    assert len(values) == LINES and len(set(values)) == LINES
    best = sorted(range(LINES), key=lambda i: -values[i])[: LINES // 2]
    pairs = list(zip(lines_of(src), lines_of(ref)))
    assert list(zip(lines_of(out_src), lines_of(out_tgt))) == [pairs[i] for i in sorted(best)]


@pytest.mark.parametrize("command", ["eval", "distill", "export"])
def test_an_imported_model_names_no_corpus_and_asks_for_one(model, command, tmp_path, capsys):
    """Imported checkpoints come without their corpus: what reads data asks for it in one
    line instead of reading the built-in demo."""
    _, ckpt, _, _ = model
    args = {
        "eval": ["eval", "--checkpoint", ckpt, "--device", "cpu"],
        "distill": ["distill", "--checkpoint", ckpt, "--device", "cpu", "--out", tmp_path / "d"],
        "export": ["export", "--checkpoint", ckpt, "--output", tmp_path / "e", "--vocab-map"],
    }[command]
    code, _, err = run_cli(capsys, *args)
    assert code == 2 and "data.dataset: none" in err and "data.dir" in err, err
    assert len(err.strip().splitlines()) == 1, err
    assert not (tmp_path / "e").exists() and not (tmp_path / "d").exists()


def test_distill_translates_the_training_sources_with_the_imported_teacher(model, tmp_path, capsys):
    _, ckpt, _, _ = model
    out = tmp_path / "distilled"
    data = ["--set", "data.dataset=demo", "--set", "data.demo_train=6"]
    data += ["--set", "data.demo_dev=2", "--set", "data.demo_test=2"]
    args = ["distill", "--checkpoint", ckpt, "--device", "cpu", "--out", out, "--beam", "2"]
    code, said, err = run_cli(capsys, *args, *data)
    assert code == 0, err
    assert "distilled 6 lines" in said
    sources, outputs = lines_of(out / "train.de"), lines_of(out / "train.en")
    assert len(sources) == len(outputs) == 6
    engine = load_engine(ckpt, device="cpu")  # the teacher's own decode settings, beam 2
    want = guided_translate(engine, sources, decode=engine.cfg.decode.replace(beam=2))
    assert outputs == [h[0].text for h in want]


@pytest.fixture(scope="module")
def exported(model, tmp_path_factory):
    """The int8 CTranslate2 export with a shortlist learnt from 200 demo pairs."""
    pytest.importorskip("ctranslate2")
    from commandline import cli_captured

    out = tmp_path_factory.mktemp("ct2") / "int8"
    shortlist = ["--vocab-map", "--set", "data.dataset=demo", "--set", "data.demo_train=200"]
    args = ["export", "--checkpoint", model[1], "--output", out, "--quantization", "int8"]
    done = cli_captured(*args, *shortlist)
    assert done.returncode == 0, done.stderr
    return out


def test_the_int8_export_with_a_shortlist_translates_within_it(model, exported, capsys):
    _, ckpt, src, _ = model
    manifest = json.loads((exported / "manifest.json").read_text())
    assert manifest["quantization"] == "int8" and manifest["vocab_map"]
    outputs = translated(capsys, exported, "--beam", "2", "--input", src)
    assert len(outputs) == LINES and any(outputs)
    # every output piece is one the shortlist allows for the source's pieces
    rows = {}
    for line in (exported / "vmap.txt").read_text(encoding="utf-8").splitlines():
        key, _, allowed = line.partition("\t")
        rows[key] = set(allowed.split())
    tokenizer = load_engine(ckpt, device="cpu").tokenizer
    for source, output in zip(lines_of(src), outputs):
        allowed = set(rows.get("", ()))
        for piece in tokenizer.src.encode(source, out_type=str):
            allowed |= rows.get(piece, set())
        pieces = set(tokenizer.tgt.encode(output, out_type=str)) if output else set()
        assert pieces <= allowed, (source, pieces - allowed)


def test_the_export_carries_the_origin_and_licence(exported, capsys):
    code, out, err = run_cli(capsys, "info", exported)
    assert code == 0, err
    assert "licence: CC-BY 4.0 (test)" in out and "huggingface-marian" in out


def test_serve_answers_with_the_imported_model(model):
    pytest.importorskip("fastapi")
    from serving import app_client

    _, ckpt, src, _ = model
    texts = lines_of(src)[:3]
    engine = load_engine(ckpt, device="cpu", any_language=True)
    dc = engine.cfg.decode.replace(beam=2, max_len_a=0.0, max_len_b=8)
    with app_client(engine, ckpt, dc) as client:
        answer = client.post("/translate", json={"texts": texts})
        page = client.get("/")
    assert answer.status_code == 200, answer.text
    want = [h[0].text for h in guided_translate(engine, texts, decode=dc)]
    assert answer.json()["translations"] == want
    assert page.status_code == 200 and "<html" in page.text.lower()
