"""`translator import` of a Hugging Face M2M100/NLLB folder, checked against transformers
itself on a tiny random model (released weights cannot be downloaded here): the tokenizer's
ids with the language codes, the same log-probabilities under teacher forcing, the same
greedy outputs as generate with forced_bos_token_id, language codes chosen on the command
line and never shown, and one-line errors."""

import json
import shutil

import pytest
import torch
from checkpoints import needs_ct2
from commandline import run_cli
from imported_m2m100 import KINDS, STEPS, import_kind, padded, sources, table, their_log_probs
from pretrained import SENTENCES, demo_pairs, one_line_error
from pretrained_m2m100 import LANGUAGES, nllb_folder

from translator.decode.request import DecodeRequest
from translator.engines.load import load_engine
from translator.models.checkpoint import Checkpoint
from translator.specials import BOS, EOS, PAD

transformers = pytest.importorskip("transformers")


@pytest.fixture(scope="module", params=list(KINDS))
def imported(request, tmp_path_factory):
    return import_kind(request.param, tmp_path_factory)


def test_source_and_target_ids_are_the_tokenizers(imported):
    path, tok = imported.path, imported.tok
    engine = load_engine(path, "cpu", src_lang=imported.src, tgt_lang=imported.targets[0])
    ids = table(path)
    pairs = demo_pairs()["test"]
    src, tgt = [s for s, _ in pairs], [t for _, t in pairs]
    tok.src_lang = imported.src
    theirs = tok(src)
    ours_src = [ids[[*engine.source_prefix, *s]].tolist() for s in engine.tokenizer.encode_src(src)]
    assert ours_src == theirs["input_ids"]
    start = list(engine.target_start)
    ours_tgt = [ids[start + t[1:]].tolist() for t in engine.tokenizer.encode_tgt(tgt)]
    tok.tgt_lang = imported.targets[0]
    assert ours_tgt == tok(text_target=tgt)["input_ids"]
    assert tok.convert_ids_to_tokens(ids[list(engine.target_start)].tolist()) == [imported.piece]


def test_teacher_forced_log_probs_match_transformers(imported):
    path, hf = imported.path, imported.hf
    _, tokenizer, model = Checkpoint.load(path).build(str(path))
    model.eval()
    engine = load_engine(path, "cpu", src_lang=imported.src, tgt_lang=imported.targets[0])
    ids = table(path)
    pairs = demo_pairs()["test"]
    assert len(pairs) == SENTENCES
    src = sources(engine, [s for s, _ in pairs])
    start = list(engine.target_start)  # <s> (the model's </s>), the code, the pieces, </s>
    tgt = padded([t[:1] + start + t[1:] for t in tokenizer.encode_tgt([t for _, t in pairs])])
    with torch.no_grad():
        ours = torch.log_softmax(model(src, tgt[:, :-1]).float(), -1)
        theirs = their_log_probs(hf, src, tgt, ids, ids)
    real = tgt[:, 1:] != PAD
    outputs = torch.arange(ours.size(-1)) != BOS  # (BOS's column repeats the model's </s>)
    diff = (ours - theirs)[real][:, outputs].abs().max().item()
    print(f"{imported.folder}: max abs difference of log-probabilities {diff:.2e}")
    assert diff < 1e-4, diff
    assert ours[..., BOS].max() < -1000  # <s> takes no share of the softmax
    # translator score: the same sums, the forced code read but not scored
    scores = engine.score([s for s, _ in pairs], [t for _, t in pairs])
    picked = theirs.gather(-1, tgt[:, 1:, None]).squeeze(-1).masked_fill(~real, 0.0)
    want = picked[:, 1:].sum(1)
    got = torch.tensor([s.logprob for s in scores])
    assert (got - want).abs().max() < 1e-3
    assert [s.tokens for s in scores] == (real.sum(1) - 1).tolist()


def generate(imported, lines, tgt_lang):
    """transformers' greedy outputs as translator ids, the start, the code and <eos> dropped.
    Banned on both sides: <pad> and <unk> (translator's defaults: its search never outputs
    <pad> or <s>, the start row, and <unk> only with decode.allow_unk); generate bans
    nothing by itself. forced_eos_token_id ends an output at the limit as translator's
    search does."""
    hf, path = imported.hf, imported.path
    ids = table(path)
    src = sources(load_engine(path, "cpu", src_lang=imported.src, tgt_lang=tgt_lang), lines)
    code = Checkpoint.load(path).source["languages"][tgt_lang]
    config = hf.config
    with torch.no_grad():
        out = hf.generate(
            input_ids=ids[src],
            attention_mask=(src != PAD).long(),
            num_beams=1,
            do_sample=False,
            max_new_tokens=STEPS + 2,  # the code, STEPS tokens, </s>
            forced_bos_token_id=int(ids[code]),
            forced_eos_token_id=config.eos_token_id,
            suppress_tokens=[config.pad_token_id, int(ids[1])],
            decoder_start_token_id=config.decoder_start_token_id,
        )
    back = {int(m): i for i, m in enumerate(ids.tolist())}  # (the model's </s>: our </s>)
    found = []
    for row in out[:, 2:].tolist():
        row = [back[m] for m in row]
        found.append(row[: row.index(EOS)] if EOS in row else row)
    return found, out


def test_greedy_outputs_match_generate(imported):
    path = imported.path
    lines = [s for s, _ in demo_pairs()["test"]]
    for tgt_lang in imported.targets:
        engine = load_engine(path, "cpu", src_lang=imported.src, tgt_lang=tgt_lang)
        dc = engine.cfg.decode.replace(beam=1, max_len_a=0.0, max_len_b=STEPS)
        ours = [hyps[0].tokens for hyps in engine.translate(lines, DecodeRequest(dc))]
        theirs, out = generate(imported, lines, tgt_lang)
        assert [list(map(int, t)) for t in ours] == theirs
        assert (out[:, 1] == int(table(path)[engine.target_start[0]])).all()
        assert len({len(t) for t in theirs}) >= 2  # outputs of varied length
        assert len({tuple(t) for t in theirs}) >= 10  # that differ with the source
        code = engine.target_start[0]
        assert all(code not in t for t in ours)


def test_translate_chooses_the_language_on_the_command_line(imported, capsys):
    path, tok = imported.path, imported.tok
    lines = [s for s, _ in demo_pairs()["test"]][:3]
    args = ["translate", "--checkpoint", str(path), "--device", "cpu", "--beam", "1"]
    args += ["--max-len-a", "0", "--max-len-b", str(STEPS), "--src-lang", imported.src]
    said = {}
    codes = Checkpoint.load(path).source["languages"]
    pieces = tok.convert_ids_to_tokens(table(path)[list(codes.values())].tolist())
    for lang in imported.targets:
        code, out, err = run_cli(capsys, *args, "--tgt-lang", lang, *lines)
        assert code == 0, err
        said[lang] = out.splitlines()
        _, generated = generate(imported, lines, lang)
        # (after the start and the code: M2M100Tokenizer would print its codes)
        assert said[lang] == tok.batch_decode(generated[:, 2:], skip_special_tokens=True)
        forced = pieces[list(codes).index(lang)]  # (random weights output other codes)
        assert not any(forced in line for line in said[lang])
    assert said[imported.targets[0]] != said[imported.targets[1]]  # the code steers it
    # without --tgt-lang, the tokenizer's tgt_lang is the model's own
    code, out, err = run_cli(capsys, *args, *lines)
    assert code == 0 and out.splitlines() == said[imported.targets[1]], err


def test_unknown_language_is_one_line_listing_the_models(imported, capsys):
    path = imported.path
    for option in ("--tgt-lang", "--src-lang"):
        code, _, err = run_cli(
            capsys, "translate", "--checkpoint", str(path), "--device", "cpu", option,
            "klingon", "Ein Hund.",
        )  # fmt: skip
        one_line_error(code, err, f"{option} klingon", imported.src, *imported.targets)


def test_import_on_the_command_line_keeps_the_codes_and_card(imported, tmp_path, capsys):
    out = tmp_path / "m.pt"
    code, said, err = run_cli(capsys, "import", str(imported.folder), "--output", str(out))
    assert code == 0, err
    assert "M2M100/NLLB" in said
    ckpt = Checkpoint.load(out)
    codes = sorted(ckpt.source["languages"])
    assert codes == sorted(LANGUAGES) if "nllb" in str(imported.folder) else len(codes) == 100
    assert ckpt.source["files"]["LICENSE"].startswith("CC-BY-NC")
    data = ckpt.config["data"]
    assert (data["src_lang"], data["tgt_lang"]) == (imported.src, imported.targets[1])
    assert ckpt.config["model"]["positions"] == "m2m100"


@pytest.fixture(scope="module")
def nllb_source(tmp_path_factory):
    return nllb_folder(tmp_path_factory.mktemp("bad-source") / "hf")


def no_codes(folder):
    data = json.loads((folder / "tokenizer.json").read_text())
    data["added_tokens"] = [t for t in data["added_tokens"] if t["content"] not in LANGUAGES]
    (folder / "tokenizer.json").write_text(json.dumps(data))


def test_a_folder_without_its_language_codes_is_one_line(imported, tmp_path, capsys):
    copy = tmp_path / "bad"
    shutil.copytree(imported.folder, copy)
    if (copy / "tokenizer.json").is_file():
        no_codes(copy)
        needles = ["no language codes"]
    else:  # M2M100Tokenizer: the list of codes is named, not listed
        edit_json("tokenizer_config.json", language_codes="m2m200")(copy)
        needles = ["language_codes 'm2m200'", "m2m100, wmt21"]
    code, _, err = run_cli(capsys, "import", str(copy), "--output", str(tmp_path / "m.pt"))
    one_line_error(code, err, *needles)


def edit_json(name, **changes):
    def change(folder):
        data = json.loads((folder / name).read_text())
        (folder / name).write_text(json.dumps({**data, **changes}))

    return change


@pytest.mark.parametrize(
    "change, needles",
    [
        (edit_json("config.json", activation_function="tanh"), ["activation_function 'tanh'"]),
        (edit_json("config.json", pad_token_id=0), ["pad_token_id 0"]),
        (edit_json("config.json", encoder_layers="six"), ["encoder_layers 'six'"]),
        (edit_json("tokenizer_config.json", legacy_behaviour=True), ["legacy_behaviour"]),
        (lambda f: (f / "sentencepiece.bpe.model").unlink(), ["sentencepiece.bpe.model"]),
        (lambda f: (f / "tokenizer.json").unlink(), ["neither tokenizer.json", "nor vocab.json"]),
        (
            lambda f: (f / "sentencepiece.bpe.model").write_bytes(b"junk"),
            ["sentencepiece.bpe.model: not a readable sentencepiece model"],
        ),
        (edit_json("config.json", vocab_size=50), ["vocab_size 50"]),
        (edit_json("config.json", dropout="x"), ["dropout 'x'"]),
        (
            edit_json("config.json", d_model=64),
            ["config.json's sizes", "src_embed.weight", ", 64] by config.json"],
        ),
        (
            edit_json("config.json", decoder_layers=1),
            ["decoder.layers.1.", "beyond config.json's decoder_layers 1"],
        ),
        (
            edit_json("config.json", encoder_attention_heads=5, decoder_attention_heads=5),
            ["config.json", "not divisible by encoder_attention_heads 5"],
        ),
    ],
    ids=[
        "activation",
        "pad",
        "layers",
        "legacy",
        "no-spm",
        "no-tokenizer",
        "bad-spm",
        "vocab-size",
        "dropout",
        "d-model",
        "fewer-layers",
        "heads",
    ],
)
def test_a_bad_folder_is_one_line(nllb_source, tmp_path, capsys, change, needles):
    copy = tmp_path / "bad"
    shutil.copytree(nllb_source, copy)
    change(copy)
    code, _, err = run_cli(capsys, "import", str(copy), "--output", str(tmp_path / "m.pt"))
    one_line_error(code, err, str(copy), *needles)


@needs_ct2
def test_the_ctranslate2_export_computes_the_same_greedy_outputs(imported, tmp_path):
    """The export's position table (fairseq's from angle 2, already sliced) and pre-norm
    stacks, checked through CTranslate2 itself: given the language codes as translator
    gives them (the source's first piece, the target prefix), its greedy outputs are the
    PyTorch engine's."""
    import ctranslate2

    from translator.engines.export import export_checkpoint

    path, tgt = imported.path, imported.targets[0]
    export_checkpoint(path, "ctranslate2", "float32", tmp_path / "ct2")
    engine = load_engine(path, "cpu", src_lang=imported.src, tgt_lang=tgt)
    lines = [s for s, _ in demo_pairs()["test"]]
    dc = engine.cfg.decode.replace(beam=1, max_len_a=0.0, max_len_b=STEPS)
    ours = [hyps[0].tokens for hyps in engine.translate(lines, DecodeRequest(dc))]
    piece = engine.tokenizer.tgt.id_to_piece
    src = [[piece(i) for i in s] for s in sources(engine, lines).tolist()]
    src = [[p for p in s if p != piece(PAD)] for s in src]
    found = ctranslate2.Translator(str(tmp_path / "ct2"), device="cpu").translate_batch(
        src,
        target_prefix=[[piece(engine.target_start[0])]] * len(src),
        beam_size=1,
        max_decoding_length=STEPS + 1,  # the code and STEPS tokens
        suppress_sequences=[[piece(PAD)], [piece(BOS)]],
        disable_unk=True,
        max_input_length=0,
    )
    theirs = [[engine.tokenizer.tgt.piece_to_id(p) for p in r.hypotheses[0][1:]] for r in found]
    assert [list(t) for t in ours] == theirs
    # the export's manifest carries the source record, with its language codes
    exported = load_engine(tmp_path / "ct2", "cpu", src_lang=imported.src, tgt_lang=tgt)
    assert exported.target_start == engine.target_start
    got = exported.translate(lines, DecodeRequest(dc))
    assert [h[0].tokens for h in got] == [h for h in ours]
    pairs = demo_pairs()["test"][:10]
    want = engine.score([s for s, _ in pairs], [t for _, t in pairs])
    scored = exported.score([s for s, _ in pairs], [t for _, t in pairs])
    assert all(abs(a.logprob - b.logprob) < 1e-3 for a, b in zip(want, scored))
    assert [a.tokens for a in want] == [b.tokens for b in scored]
    # a beam's n-best: a hypothesis both find has one score, the forced code's left out of
    # both (CTranslate2 renormalises, a difference in the 3rd decimal)
    wide = DecodeRequest(dc.replace(beam=4), nbest=4)
    pairs = 0
    for mine, its in zip(engine.translate(lines, wide), exported.translate(lines, wide)):
        found = {h.tokens: h.score for h in its}
        for h in mine:
            if h.tokens in found:
                pairs += 1
                assert abs(found[h.tokens] - h.score) < 0.02, (h, found)
    assert pairs >= len(lines)


def test_serve_takes_each_requests_language(imported):
    """The server's requests name their target language: its code is each request's
    forced, unshown start (continuous batching mixes requests of both languages)."""
    pytest.importorskip("fastapi")
    from serving import app_client

    path = imported.path
    texts = [s for s, _ in demo_pairs()["test"]][:4]
    engine = load_engine(path, device="cpu", any_language=True)
    dc = engine.cfg.decode.replace(beam=2, max_len_a=0.0, max_len_b=8)
    answers = {}
    with app_client(engine, path, dc) as client:
        for lang in imported.targets:
            answers[lang] = client.post("/translate", json={"texts": texts, "tgt_lang": lang})
        unknown = client.post("/translate", json={"texts": texts, "tgt_lang": "klingon"})
        other = next(lang for lang in imported.targets if lang != imported.src)
        body = {"texts": texts, "tgt_lang": imported.src, "src_lang": other}
        named = client.post("/translate", json=body)
        bad_source = client.post("/translate", json={**body, "src_lang": "klingon"})
    assert named.status_code == 200, named.text
    reverse = load_engine(path, "cpu", src_lang=other, tgt_lang=imported.src)
    want = [h[0].text for h in reverse.translate(texts, DecodeRequest(dc))]
    assert named.json()["translations"] == want
    assert bad_source.status_code == 400 and "src_lang klingon" in bad_source.text
    for lang, answer in answers.items():
        assert answer.status_code == 200, answer.text
        one = load_engine(path, "cpu", src_lang=imported.src, tgt_lang=lang)
        want = [h[0].text for h in one.translate(texts, DecodeRequest(dc))]
        assert answer.json()["translations"] == want
    assert answers[imported.targets[0]].json() != answers[imported.targets[1]].json()
    assert unknown.status_code == 400 and imported.targets[0] in unknown.text


def test_a_prefix_and_constraints_follow_the_forced_code(imported):
    """--prefix and --constraint read the text after the code: the output begins with the
    prefix, holds the phrase, and shows no code."""
    from util import guided_translate

    engine = load_engine(imported.path, "cpu", src_lang=imported.src, tgt_lang=imported.targets[0])
    lines = [s for s, _ in demo_pairs()["test"]][:4]
    pairs = demo_pairs()["test"][:4]
    prefixes = [" ".join(t.split()[:2]) for _, t in pairs]
    dc = engine.cfg.decode.replace(beam=3, max_len_a=0.0, max_len_b=STEPS)
    found = guided_translate(engine, lines, prefixes=prefixes, decode=dc)
    code = engine.target_start[0]
    for hyps, prefix in zip(found, prefixes):
        want = engine.tokenizer.encode_tgt([prefix])[0][1:-1]
        assert list(hyps[0].tokens[: len(want)]) == want and code not in hyps[0].tokens
        assert hyps[0].text.startswith(prefix)
    phrases = [[t.split()[-1]] for _, t in pairs]
    found = guided_translate(engine, lines, constraints=phrases, decode=dc)
    for hyps, (phrase,) in zip(found, phrases):
        want = engine.tokenizer.encode_tgt([phrase])[0][1:-1]
        tokens = list(hyps[0].tokens)
        assert any(tokens[i : i + len(want)] == want for i in range(len(tokens)))
        assert code not in tokens


def test_eval_reads_the_source_code_and_fine_tuning_is_refused(imported, tmp_path, capsys):
    """eval's --src-lang picks the source's code as translate's does; fine-tuning would
    train on pairs without the codes, so it is refused in one line."""
    pairs = demo_pairs()["test"][:8]
    src, ref = tmp_path / "test.src", tmp_path / "test.ref"
    src.write_text("".join(s + "\n" for s, _ in pairs))
    ref.write_text("".join(t + "\n" for _, t in pairs))
    tgt = imported.targets[1]
    for lang in (imported.src, imported.targets[0]):
        out = tmp_path / f"hyp.{lang}"
        args = ["eval", "--checkpoint", str(imported.path), "--src", str(src), "--ref", str(ref)]
        args += ["--src-lang", lang, "--tgt-lang", tgt, "--beam", "1", "--output", str(out)]
        code, _, err = run_cli(capsys, *args)
        assert code == 0, err
        engine = load_engine(imported.path, "cpu", src_lang=lang, tgt_lang=tgt)
        request = engine.request(decode=engine.cfg.decode.replace(beam=1))
        want = [h[0].text for h in engine.translate([s for s, _ in pairs], request)]
        assert out.read_text().splitlines() == want
    config = tmp_path / "finetune.yaml"
    config.write_text(f"run_dir: {tmp_path / 'run'}\ndata: {{dataset: demo}}\n")
    code, _, err = run_cli(
        capsys, "train", "--config", str(config), "--init-from", str(imported.path)
    )
    one_line_error(code, err, "--init-from", "language codes")


def test_a_tokenizer_without_src_lang_reads_sources_as_transformers(tmp_path, capsys):
    folder = nllb_folder(tmp_path / "hf", tgt_lang=None)
    edit_json("tokenizer_config.json", src_lang=None)(folder)
    code, _, err = run_cli(capsys, "import", str(folder), "--output", str(tmp_path / "m.pt"))
    assert code == 0, err
    engine = load_engine(tmp_path / "m.pt", "cpu", tgt_lang=LANGUAGES[2])
    line = demo_pairs()["test"][0][0]
    ours = table(tmp_path / "m.pt")[
        [*engine.source_prefix, *engine.tokenizer.encode_src([line])[0]]
    ]
    theirs = transformers.AutoTokenizer.from_pretrained(folder)(line)["input_ids"]
    assert ours.tolist() == theirs


def test_the_library_takes_each_calls_languages(imported):
    """translator.api: each call's tgt_lang and src_lang give the engine's outputs for
    those codes, with the code forced and unshown; the model's own where a call names none."""
    from util import user_error

    from translator import api

    model = api.load(imported.path, device="cpu", src_lang=imported.src)
    texts = [s for s, _ in demo_pairs()["test"]][:4]
    settings = {"beam": 2, "max_len_a": 0.0, "max_len_b": 8}
    for lang in imported.targets:
        one = load_engine(imported.path, "cpu", src_lang=imported.src, tgt_lang=lang)
        dc = one.cfg.decode.replace(**settings)
        want = [h[0].text for h in one.translate(texts, DecodeRequest(dc))]
        assert model.translate(texts, tgt_lang=lang, **settings) == want
    own = model.translate(texts, **settings)
    assert own == model.translate(texts, tgt_lang=imported.targets[1], **settings)
    assert "tgt_lang klingon" in user_error(model.translate, texts, tgt_lang="klingon")


def test_an_nbest_as_wide_as_the_beam_ranks_as_a_narrower_one(imported):
    """The forced code's log-probability is left out of every n-best, whatever its size: the
    best of --nbest 4 at beam 4 is the 1-best, with the same score."""
    engine = load_engine(imported.path, "cpu", src_lang=imported.src, tgt_lang=imported.targets[0])
    lines = [s for s, _ in demo_pairs()["test"]][:20]
    dc = engine.cfg.decode.replace(beam=4, max_len_a=0.0, max_len_b=8)
    one, two, four = (engine.translate(lines, DecodeRequest(dc, nbest=k)) for k in (1, 2, 4))
    for a, b, c in zip(one, two, four):
        assert a[0].tokens == b[0].tokens == c[0].tokens
        assert [h.score for h in b] == pytest.approx([h.score for h in c[:2]])
        assert a[0].score == pytest.approx(c[0].score)
