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
from pretrained import SENTENCES, demo_pairs, one_line_error
from pretrained_m2m100 import LANGUAGES, nllb_folder

from translator.decode.request import DecodeRequest
from translator.engines.load import load_engine
from translator.models.checkpoint import Checkpoint
from translator.pretrained import import_pretrained
from translator.specials import BOS, EOS, PAD

transformers = pytest.importorskip("transformers")

STEPS = 20  # greedy output tokens at most, <eos> and the forced language code not counted


@pytest.fixture(scope="module")
def imported(tmp_path_factory):
    """(folder, checkpoint path, transformers' model, its tokenizer)."""
    root = tmp_path_factory.mktemp("nllb")
    folder = nllb_folder(root / "hf")
    import_pretrained(str(folder), root / "imported.pt")
    hf = transformers.M2M100ForConditionalGeneration.from_pretrained(folder).eval()
    tok = transformers.NllbTokenizer.from_pretrained(folder)
    return folder, root / "imported.pt", hf, tok


def table(path) -> torch.Tensor:
    """translator id -> the model's id."""
    return torch.tensor(Checkpoint.load(path).source["ids"]["src"])


def padded(rows: list[list[int]]) -> torch.Tensor:
    out = torch.full((len(rows), max(map(len, rows))), PAD)
    for i, row in enumerate(rows):
        out[i, : len(row)] = torch.tensor(row)
    return out


def sources(engine, lines) -> torch.Tensor:
    """Source ids as the engine builds them: its language code, the pieces, </s>."""
    return padded([[*engine.source_prefix, *ids] for ids in engine.tokenizer.encode_src(lines)])


def test_source_and_target_ids_are_the_tokenizers(imported):
    folder, path, _, tok = imported
    engine = load_engine(path, "cpu", src_lang="deu_Latn", tgt_lang="fra_Latn")
    ids = table(path)
    pairs = demo_pairs()["test"]
    src, tgt = [s for s, _ in pairs], [t for _, t in pairs]
    theirs = tok(src, text_target=tgt)
    ours_src = [ids[[*engine.source_prefix, *s]].tolist() for s in engine.tokenizer.encode_src(src)]
    assert ours_src == theirs["input_ids"]
    start = list(engine.target_start)
    ours_tgt = [ids[start + t[1:]].tolist() for t in engine.tokenizer.encode_tgt(tgt)]
    tok.tgt_lang = "fra_Latn"
    assert ours_tgt == tok(text_target=tgt)["input_ids"]
    assert tok.convert_ids_to_tokens(ids[list(engine.target_start)].tolist()) == ["fra_Latn"]


def test_teacher_forced_log_probs_match_transformers(imported):
    _, path, hf, _ = imported
    _, tokenizer, model = Checkpoint.load(path).build(str(path))
    model.eval()
    engine = load_engine(path, "cpu", src_lang="deu_Latn", tgt_lang="fra_Latn")
    ids = table(path)
    pairs = demo_pairs()["test"]
    assert len(pairs) == SENTENCES
    src = sources(engine, [s for s, _ in pairs])
    start = list(engine.target_start)  # <s> (the model's </s>), the code, the pieces, </s>
    tgt = padded([t[:1] + start + t[1:] for t in tokenizer.encode_tgt([t for _, t in pairs])])
    with torch.no_grad():
        ours = torch.log_softmax(model(src, tgt[:, :-1]).float(), -1)
        theirs = hf(
            input_ids=ids[src],
            attention_mask=(src != PAD).long(),
            decoder_input_ids=ids[tgt[:, :-1]],
        ).logits
        theirs = torch.log_softmax(theirs.float(), -1)[..., ids]
    real = tgt[:, 1:] != PAD
    outputs = torch.arange(ours.size(-1)) != BOS  # (BOS's column repeats the model's </s>)
    diff = (ours - theirs)[real][:, outputs].abs().max().item()
    print(f"max abs difference of log-probabilities: {diff:.2e}")
    assert diff < 1e-4, diff
    assert ours[..., BOS].max() < -1000  # <s> takes no share of the softmax
    # translator score: the same sums, the forced code read but not scored
    scores = engine.score([s for s, _ in pairs], [t for _, t in pairs])
    picked = theirs.gather(-1, tgt[:, 1:, None]).squeeze(-1).masked_fill(~real, 0.0)
    want = picked[:, 1:].sum(1)
    got = torch.tensor([s.logprob for s in scores])
    assert (got - want).abs().max() < 1e-3
    assert [s.tokens for s in scores] == (real.sum(1) - 1).tolist()


def generate(hf, path, engine, lines, tgt_lang):
    """transformers' greedy outputs as translator ids, the start, the code and <eos> dropped.
    Banned on both sides: <pad> and <unk> (translator's defaults: its search never outputs
    <pad> or <s>, the start row, and <unk> only with decode.allow_unk); generate bans
    nothing by itself. forced_eos_token_id ends an output at the limit as translator's
    search does."""
    ids = table(path)
    src = sources(engine, lines)
    config = hf.config
    with torch.no_grad():
        out = hf.generate(
            input_ids=ids[src],
            attention_mask=(src != PAD).long(),
            num_beams=1,
            do_sample=False,
            max_new_tokens=STEPS + 2,  # the code, STEPS tokens, </s>
            forced_bos_token_id=int(ids[engine.codes_start(tgt_lang)]),
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
    folder, path, hf, _ = imported
    lines = [s for s, _ in demo_pairs()["test"]]
    for tgt_lang in ("fra_Latn", "eng_Latn"):
        engine = load_engine(path, "cpu", src_lang="deu_Latn", tgt_lang=tgt_lang)
        dc = engine.cfg.decode.replace(beam=1, max_len_a=0.0, max_len_b=STEPS)
        ours = [hyps[0].tokens for hyps in engine.translate(lines, DecodeRequest(dc))]
        theirs, out = generate(hf, path, LanguageOf(engine, path), lines, tgt_lang)
        assert [list(map(int, t)) for t in ours] == theirs
        assert (out[:, 1] == int(table(path)[engine.target_start[0]])).all()
        assert len({len(t) for t in theirs}) >= 2  # outputs of varied length
        assert len({tuple(t) for t in theirs}) >= 10  # that differ with the source
        code = engine.target_start[0]
        assert all(code not in t for t in ours)


class LanguageOf:
    """An engine's source ids, and the translator id of a target language's code."""

    def __init__(self, engine, path):
        self.source_prefix, self.tokenizer = engine.source_prefix, engine.tokenizer
        self.codes = Checkpoint.load(path).source["languages"]

    def codes_start(self, lang):
        return self.codes[lang]


def test_translate_chooses_the_language_on_the_command_line(imported, capsys):
    folder, path, hf, tok = imported
    lines = [s for s, _ in demo_pairs()["test"]][:3]
    args = ["translate", "--checkpoint", str(path), "--device", "cpu", "--beam", "1"]
    args += ["--max-len-a", "0", "--max-len-b", str(STEPS), "--src-lang", "deu_Latn"]
    said = {}
    for lang in ("fra_Latn", "eng_Latn"):
        code, out, err = run_cli(capsys, *args, "--tgt-lang", lang, *lines)
        assert code == 0, err
        said[lang] = out.splitlines()
        engine = LanguageOf(load_engine(path, "cpu", src_lang="deu_Latn"), path)
        _, generated = generate(hf, path, engine, lines, lang)
        assert said[lang] == tok.batch_decode(generated, skip_special_tokens=True)
        assert not any(c in line for line in said[lang] for c in LANGUAGES)
    assert said["fra_Latn"] != said["eng_Latn"]  # the forced code steers the output
    # without --tgt-lang, the tokenizer's tgt_lang (eng_Latn) is the model's own
    code, out, err = run_cli(capsys, *args, *lines)
    assert code == 0 and out.splitlines() == said["eng_Latn"], err


def test_unknown_language_is_one_line_listing_the_models(imported, capsys):
    _, path, _, _ = imported
    for option in ("--tgt-lang", "--src-lang"):
        code, _, err = run_cli(
            capsys, "translate", "--checkpoint", str(path), "--device", "cpu", option,
            "klingon", "Ein Hund.",
        )  # fmt: skip
        one_line_error(code, err, f"{option} klingon", *LANGUAGES)


def test_import_on_the_command_line_keeps_the_codes_and_card(imported, tmp_path, capsys):
    folder, _, _, _ = imported
    out = tmp_path / "m.pt"
    code, said, err = run_cli(capsys, "import", str(folder), "--output", str(out))
    assert code == 0, err
    assert "M2M100/NLLB" in said
    ckpt = Checkpoint.load(out)
    assert sorted(ckpt.source["languages"]) == sorted(LANGUAGES)
    assert ckpt.source["files"]["LICENSE"].startswith("CC-BY-NC")
    assert (ckpt.config["data"]["src_lang"], ckpt.config["data"]["tgt_lang"]) == (
        "deu_Latn", "eng_Latn",
    )  # fmt: skip
    assert ckpt.config["model"]["positions"] == "m2m100"


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
        (lambda f: (f / "tokenizer.json").unlink(), ["tokenizer.json is missing"]),
        (edit_json("config.json", vocab_size=50), ["vocab_size 50"]),
    ],
    ids=["activation", "pad", "layers", "legacy", "no-spm", "no-tokenizer", "vocab-size"],
)
def test_a_bad_folder_is_one_line(imported, tmp_path, capsys, change, needles):
    folder, _, _, _ = imported
    copy = tmp_path / "bad"
    shutil.copytree(folder, copy)
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

    _, path, _, _ = imported
    export_checkpoint(path, "ctranslate2", "float32", tmp_path / "ct2")
    engine = load_engine(path, "cpu", src_lang="deu_Latn", tgt_lang="fra_Latn")
    lines = [s for s, _ in demo_pairs()["test"]]
    dc = engine.cfg.decode.replace(beam=1, max_len_a=0.0, max_len_b=STEPS)
    ours = [hyps[0].tokens for hyps in engine.translate(lines, DecodeRequest(dc))]
    piece = engine.tokenizer.tgt.id_to_piece
    src = [[piece(i) for i in s] for s in sources(engine, lines).tolist()]
    src = [[p for p in s if p != piece(PAD)] for s in src]
    found = ctranslate2.Translator(str(tmp_path / "ct2"), device="cpu").translate_batch(
        src,
        target_prefix=[["fra_Latn"]] * len(src),
        beam_size=1,
        max_decoding_length=STEPS + 1,  # the code and STEPS tokens
        suppress_sequences=[[piece(PAD)], [piece(BOS)]],
        disable_unk=True,
        max_input_length=0,
    )
    theirs = [[engine.tokenizer.tgt.piece_to_id(p) for p in r.hypotheses[0][1:]] for r in found]
    assert [list(t) for t in ours] == theirs
    # the exported engine puts the codes where the manifest lists them (engines/ct2.py)
    manifest = json.loads((tmp_path / "ct2" / "manifest.json").read_text())
    manifest.setdefault("languages", Checkpoint.load(path).source["languages"])
    (tmp_path / "ct2" / "manifest.json").write_text(json.dumps(manifest))
    exported = load_engine(tmp_path / "ct2", "cpu", src_lang="deu_Latn", tgt_lang="fra_Latn")
    assert exported.target_start == engine.target_start
    got = exported.translate(lines, DecodeRequest(dc))
    assert [h[0].tokens for h in got] == [h for h in ours]
    pairs = demo_pairs()["test"][:10]
    want = engine.score([s for s, _ in pairs], [t for _, t in pairs])
    scored = exported.score([s for s, _ in pairs], [t for _, t in pairs])
    assert all(abs(a.logprob - b.logprob) < 1e-3 for a, b in zip(want, scored))
    assert [a.tokens for a in want] == [b.tokens for b in scored]
