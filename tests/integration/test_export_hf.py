"""`translator export --format huggingface`, checked with transformers itself: an imported
MarianMT model comes back with the original's logits; a model trained here in Marian's
layout generates in transformers what `translator translate` gives; any other layout, a
quantization and a folder translator did not write are one-line refusals."""

import json
import os
import stat

import pytest
import torch
from commandline import run_cli
from pretrained import demo_pairs, marian_folder, one_line_error
from util import guided_translate, tiny_config

from translator.config import config_from_dict
from translator.engines.load import load_engine
from translator.models.checkpoint import Checkpoint
from translator.pretrained import import_pretrained
from translator.specials import EOS, PAD
from translator.train.trainer import Trainer

transformers = pytest.importorskip("transformers")

VARIANTS = {
    "shared-tied": {},
    "separate-untied": {"share": False, "tie": False},
    "separate-vocabs": {"share": False, "separate_vocabs": True},
}
EOS_BIAS = 4.0
STEPS = 20  # greedy output tokens at most, <eos> not counted
# Marian's layout, trained here: post-norm, sin/cos in halves, a logits bias, untied output
MARIAN_LAYOUT = {
    "pre_norm": False,
    "final_norm": False,
    "positions": "halves",
    "logits_bias": True,
    "activation": "gelu",
}


def export(capsys, checkpoint, output, *extra):
    args = ["export", "--checkpoint", str(checkpoint), "--format", "huggingface"]
    return run_cli(capsys, *args, "--output", str(output), *extra)


def padded(rows: list[list[int]], pad: int = PAD) -> tuple[torch.Tensor, torch.Tensor]:
    """(ids [N, L] padded with `pad`, attention mask)."""
    out = torch.full((len(rows), max(map(len, rows))), pad, dtype=torch.long)
    mask = torch.zeros_like(out)
    for i, row in enumerate(rows):
        out[i, : len(row)], mask[i, : len(row)] = torch.tensor(row), 1
    return out, mask


def teacher_forced_logits(folder, model, pairs) -> torch.Tensor:
    """The logits of `model` (a transformers MarianMTModel) for the pairs read by the
    folder's MarianTokenizer, the decoder fed its start id then the reference."""
    tok = transformers.MarianTokenizer.from_pretrained(folder)
    src = tok([s for s, _ in pairs], padding=True, return_tensors="pt")
    # the targets padded with the model's own pad id: with separate vocabularies the tokenizer
    # would pad them with the source's
    rows = tok(text_target=[t for _, t in pairs])["input_ids"]
    tgt, _ = padded(rows, model.config.pad_token_id)
    start = torch.full((tgt.size(0), 1), model.config.decoder_start_token_id)
    with torch.no_grad():
        return model(**src, decoder_input_ids=torch.cat([start, tgt[:, :-1]], 1)).logits


@pytest.fixture(scope="module", params=list(VARIANTS))
def round_trip(request, tmp_path_factory):
    """(original folder, exported folder, export's printed line) of one Marian variant."""
    root = tmp_path_factory.mktemp(request.param)
    folder = marian_folder(root / "hf", **VARIANTS[request.param])
    import_pretrained(str(folder), root / "imported.pt")
    from translator.pretrained.export_hf import export_huggingface

    said = export_huggingface(root / "imported.pt", root / "exported", None)
    return folder, root / "exported", said


def test_an_imported_marian_model_exports_back_exactly(round_trip):
    folder, exported, said = round_trip
    assert "MarianMTModel" in said and "the original model's ids" in said
    original = transformers.MarianMTModel.from_pretrained(folder).eval()
    back = transformers.MarianMTModel.from_pretrained(exported).eval()
    pairs = demo_pairs()["test"]
    want = teacher_forced_logits(folder, original, pairs)
    got = teacher_forced_logits(exported, back, pairs)
    diff = (got - want).abs().max().item()
    print(f"max |logit difference| after import and export: {diff:.2e}")
    assert diff < 1e-5, diff
    for name in ("vocab.json", "target_vocab.json"):
        if (folder / name).is_file():
            mine = json.loads((exported / name).read_text(encoding="utf-8"))
            assert mine == json.loads((folder / name).read_text(encoding="utf-8")), name
    for key in ("pad_token_id", "eos_token_id", "decoder_start_token_id", "vocab_size"):
        assert back.config.to_dict()[key] == original.config.to_dict()[key], key


def test_the_card_and_licence_travel_into_the_export(round_trip):
    folder, exported, _ = round_trip
    for name in ("README.md", "LICENSE"):
        assert (exported / name).read_text() == (folder / name).read_text()
    # every file readable as the umask allows: a service of another user loads the weights
    umask = os.umask(0)
    os.umask(umask)
    usual = 0o666 & ~umask
    modes = {p.name: stat.S_IMODE(p.stat().st_mode) for p in exported.iterdir() if p.is_file()}
    assert modes.pop("model.safetensors") == usual and set(modes.values()) == {usual}, modes


def test_an_export_given_as_a_checkpoint_says_to_import_it(round_trip, capsys):
    _, exported, _ = round_trip
    code, _, err = run_cli(capsys, "translate", "--checkpoint", str(exported), "Ein Hund.")
    one_line_error(code, err, "a Hugging Face model folder", f"translator import {exported}")


@pytest.mark.parametrize("tie", [True, False], ids=["tied", "untied"])
def test_an_imported_nllb_model_exports_back_exactly(tmp_path, tie):
    from pretrained_m2m100 import nllb_folder

    from translator.pretrained.export_hf import export_huggingface

    # untied: the encoder's, decoder's and output tables are three
    folder = nllb_folder(tmp_path / "hf", tie=tie)
    import_pretrained(str(folder), tmp_path / "imported.pt")
    said = export_huggingface(tmp_path / "imported.pt", tmp_path / "exported", None)
    assert "M2M100ForConditionalGeneration" in said and "the original model's ids" in said
    for name in ("README.md", "LICENSE"):
        assert (tmp_path / "exported" / name).read_text() == (folder / name).read_text()
    config, before = (json.loads((f / "config.json").read_text()) for f in
                      (tmp_path / "exported", folder))  # fmt: skip
    for key in ("bos_token_id", "encoder_layerdrop", "decoder_layerdrop", "activation_dropout"):
        assert config[key] == before[key], key  # what fine-tuning with transformers reads
    assert config["tie_word_embeddings"] is tie
    auto = transformers.AutoModelForSeq2SeqLM
    original, back = (
        auto.from_pretrained(folder).eval(),
        auto.from_pretrained(tmp_path / "exported"),
    )
    tok = transformers.AutoTokenizer.from_pretrained(folder)
    tok_back = transformers.AutoTokenizer.from_pretrained(tmp_path / "exported")
    pairs = demo_pairs()["test"]
    lines = [s for s, _ in pairs]
    assert tok_back(lines)["input_ids"] == tok(lines)["input_ids"]
    batch = tok(lines, text_target=[t for _, t in pairs], padding=True, return_tensors="pt")
    with torch.no_grad():
        diff = (back.eval()(**batch).logits - original(**batch).logits).abs().max().item()
    print(f"max |logit difference| after NLLB import and export: {diff:.2e}")
    assert diff < 1e-5, diff
    # the exported generation_config.json forces the tokenizer's target language first, and
    # bans and ends as translator does
    src = tok(lines, padding=True, return_tensors="pt")
    with torch.no_grad():
        got = back.generate(**src, num_beams=1, max_new_tokens=STEPS)
        want = original.generate(
            **src,
            num_beams=1,
            max_new_tokens=STEPS,
            forced_bos_token_id=tok.convert_tokens_to_ids(tok.tgt_lang),
            forced_eos_token_id=original.config.eos_token_id,
            bad_words_ids=[[original.config.pad_token_id], [tok.unk_token_id]],
        )
    assert got.tolist() == want.tolist()


def test_a_finetuned_start_row_exports_in_translators_ids(imported, tmp_path):
    """Fine-tuning moves translator's <s> row away from the Marian <pad> row it started as;
    Marian's ids cannot hold both, so the export keeps translator's and starts from <s>."""
    from translator.pretrained.export_hf import export_huggingface
    from translator.specials import BOS

    ckpt = Checkpoint.load(imported)
    moved = torch.randn(
        ckpt.model["tgt_embed.weight"].size(1), generator=torch.Generator().manual_seed(0)
    )
    for name in ("src_embed.weight", "tgt_embed.weight", "generator.weight"):
        ckpt.model[name][BOS] = moved  # (one table, shared and tied, in this variant)
    ckpt.save(tmp_path / "tuned.pt")
    said = export_huggingface(tmp_path / "tuned.pt", tmp_path / "hf", None)
    assert "translator's ids" in said
    lines = lines_to_translate()
    engine = load_engine(tmp_path / "tuned.pt", device="cpu")
    decode = engine.cfg.decode.model_copy(update={"beam": 1, "max_len_a": 0.0, "max_len_b": STEPS})
    want = [list(map(int, h[0].tokens)) for h in guided_translate(engine, lines, decode=decode)]
    tok = transformers.AutoTokenizer.from_pretrained(tmp_path / "hf")
    model = transformers.MarianMTModel.from_pretrained(tmp_path / "hf").eval()
    assert model.config.decoder_start_token_id == BOS
    with torch.no_grad():
        out = model.generate(
            **tok(lines, padding=True, return_tensors="pt"), num_beams=1, max_new_tokens=STEPS + 1
        )
    got = [row[1:] for row in out.tolist()]
    assert [row[: row.index(EOS)] if EOS in row else row for row in got] == want
    assert len({len(t) for t in want}) >= 3


def eos_bias(ckpt: Checkpoint) -> None:
    """So few training steps leave a model that stops only at the length limit: a larger
    </s> logit gives outputs of varied lengths (a test of where both sides stop). M2M100 has
    no logits bias: there the </s> row of the output layer (tied to the embeddings) moves
    along the decoder's final norm bias, which every output adds."""
    w = ckpt.model
    if "generator.bias" in w:
        w["generator.bias"][EOS] += 4.0
        return
    norm = w["dec_norm.bias"]
    w["generator.weight"][EOS] += 0.5 * norm / norm.norm() ** 2
    for name in ("src_embed.weight", "tgt_embed.weight"):
        w[name][EOS] = w["generator.weight"][EOS]


NATIVE = {  # (model and tokenizer keys, class)
    "marian": ({"model": MARIAN_LAYOUT}, "MarianMTModel"),
    # a sentencepiece model and vocabulary per side, an output layer of its own
    "marian-two-vocabularies": (
        {"model": {**MARIAN_LAYOUT, "tie_embeddings": False}, "tokenizer": {"joint": False}},
        "MarianMTModel",
    ),
    "m2m100": (
        {"model": {"pre_norm": True, "final_norm": True, "positions": "m2m100"}},
        "M2M100ForConditionalGeneration",
    ),
}


@pytest.fixture(scope="module", params=list(NATIVE))
def native(request, tmp_path_factory):
    """(checkpoint, exported folder, class name, translator id -> exported id) of a
    Transformer trained here in a layout a transformers class computes."""
    root = tmp_path_factory.mktemp(request.param)
    changes, cls = NATIVE[request.param]
    cfg = tiny_config(
        run_dir=str(root / "run"),
        model=changes["model"],
        train={"max_steps": 120, "lr": 0.01, "valid_every": 10_000},
        data={"dataset": "demo", "demo_train": 200, "demo_dev": 10, "demo_test": 30},
        tokenizer={"vocab_size": 400, **changes.get("tokenizer", {})},
        decode={"max_len_a": 1.2, "max_len_b": 7},  # (a length cap of its own, to carry)
    )
    Trainer(config_from_dict(cfg)).run()
    ckpt = Checkpoint.load(root / "run" / "last.pt")
    eos_bias(ckpt)
    ckpt.save(root / "model.pt")
    from translator.pretrained.export_hf import export_huggingface

    said = export_huggingface(root / "model.pt", root / "hf", None)
    assert cls in said and "translator's ids" in said
    # fairseq's order of the specials for M2M100 (<s> 0, <pad> 1, </s> 2, <unk> 3)
    ids = {2: 0, 0: 1, 3: 2, 1: 3} if cls.startswith("M2M100") else {}
    return root / "model.pt", root / "hf", cls, ids


def lines_to_translate() -> list[str]:
    return [s for s, _ in demo_pairs()["test"]][:30]


def spaced(text: str) -> str:
    return " ".join(text.split())


def test_a_native_model_generates_what_translate_gives(native, tmp_path, capsys):
    checkpoint, folder, cls, ids = native
    lines = lines_to_translate()
    (tmp_path / "in.txt").write_text("".join(f"{s}\n" for s in lines), encoding="utf-8")
    args = ["translate", "--checkpoint", str(checkpoint), "--input", str(tmp_path / "in.txt")]
    args += ["--output", str(tmp_path / "out.txt"), "--device", "cpu", "--beam", "1"]
    code, _, err = run_cli(capsys, *args, "--max-len-a", "0", "--max-len-b", str(STEPS))
    assert code == 0, err
    want_text = (tmp_path / "out.txt").read_text(encoding="utf-8").splitlines()
    engine = load_engine(checkpoint, device="cpu")
    decode = engine.cfg.decode.model_copy(update={"beam": 1, "max_len_a": 0.0, "max_len_b": STEPS})
    want = [
        [ids.get(int(t), int(t)) for t in h[0].tokens]
        for h in guided_translate(engine, lines, decode=decode)
    ]
    assert len({len(t) for t in want}) >= 3  # outputs of varied length, not one constant

    tok = transformers.AutoTokenizer.from_pretrained(folder)
    model = transformers.AutoModelForSeq2SeqLM.from_pretrained(folder).eval()
    assert type(model).__name__ == cls
    assert model.config.decoder_start_token_id == ids.get(2, 2)  # translator's <s>
    batch = tok(lines, padding=True, return_tensors="pt")
    # the folder's generation_config.json bans <pad>, <s> and <unk> and forces </s> at the
    # limit, as translator's search does
    with torch.no_grad():
        out = model.generate(**batch, num_beams=1, do_sample=False, max_new_tokens=STEPS + 1)
    eos = model.config.eos_token_id
    got = [row[1:] for row in out.tolist()]
    got = [row[: row.index(eos)] if eos in row else row for row in got]
    assert got == want
    # (translator leaves the spaces of word-start pieces that stand alone; the tokens agree)
    texts = tok.batch_decode(out, skip_special_tokens=True)
    assert [spaced(t) for t in texts] == [spaced(t) for t in want_text]


@pytest.mark.skipif(
    int(transformers.__version__.split(".")[0]) >= 5,
    reason="transformers 5 removed the translation pipeline",
)
def test_the_translation_pipeline_translates(native):
    checkpoint, folder, _, _ = native
    lines = lines_to_translate()[:5]
    engine = load_engine(checkpoint, device="cpu")
    decode = engine.cfg.decode.model_copy(update={"beam": 1, "max_len_a": 0.0, "max_len_b": STEPS})
    want = [h[0].text for h in guided_translate(engine, lines, decode=decode)]
    translate = transformers.pipeline("translation", model=str(folder), device="cpu")
    found = translate(lines, num_beams=1, max_new_tokens=STEPS + 1)
    assert [spaced(f["translation_text"]) for f in found] == [spaced(t) for t in want]


def test_a_native_model_computes_the_same_logits(native):
    checkpoint, folder, _, ids = native
    engine = load_engine(checkpoint, device="cpu")
    pairs = demo_pairs()["test"][:30]
    src, src_mask = padded(engine.tokenizer.encode_src([s for s, _ in pairs]))
    tgt, _ = padded(engine.tokenizer.encode_tgt([t for _, t in pairs]))
    model = transformers.AutoModelForSeq2SeqLM.from_pretrained(folder).eval()
    table = torch.arange(engine.tokenizer.tgt_vocab_size)  # translator id -> exported id
    for ours, theirs in ids.items():
        table[ours] = theirs
    theirs_src = torch.where(src_mask.bool(), table[src], model.config.pad_token_id)
    theirs_tgt = torch.where(tgt != PAD, table[tgt], model.config.pad_token_id)
    with torch.no_grad():
        want = engine.model.eval()(src, tgt[:, :-1])
        got = model(
            input_ids=theirs_src, attention_mask=src_mask, decoder_input_ids=theirs_tgt[:, :-1]
        ).logits[..., table]
    real = tgt[:, 1:] != PAD
    diff = (got - want)[real].abs().max().item()
    print(f"max |logit difference| of a native model: {diff:.2e}")
    assert diff < 1e-5, diff


def test_an_export_imports_back_and_translates_as_its_checkpoint(native, tmp_path, capsys):
    checkpoint, folder, cls, _ = native
    back = tmp_path / "back.pt"
    code, said, err = run_cli(capsys, "import", str(folder), "--output", str(back))
    assert code == 0, err
    # transformers ranks by length ** alpha, and the import says it takes that ranking
    assert "decode.len_norm power, decode.len_penalty 1" in said
    code, out, _ = run_cli(capsys, "info", str(back))
    assert "licence: not stated (its card names none and no licence file)" in out
    assert "card:" in out and "translator" in out
    # the folder itself, read as the import reads it: the same model
    code, folder_info, err = run_cli(capsys, "info", str(folder))
    assert code == 0 and "Hugging Face model folder" in folder_info, err
    model_line = [line for line in out.splitlines() if line.startswith("  enc_layers")]
    assert len(model_line) == 1 and model_line[0] in folder_info
    lines = lines_to_translate()
    found, logits = [], []
    pairs = demo_pairs()["test"][:30]
    for path in (checkpoint, back):
        engine = load_engine(path, device="cpu")
        change = {"beam": 1, "max_len_a": 0.0, "max_len_b": STEPS}
        found.append(guided_translate(engine, lines, decode=engine.cfg.decode.model_copy(
            update=change)))  # fmt: skip
        src, _ = padded(engine.tokenizer.encode_src([s for s, _ in pairs]))
        tgt, _ = padded(engine.tokenizer.encode_tgt([t for _, t in pairs]))
        with torch.no_grad():
            logits.append(engine.model.eval()(src, tgt[:, :-1])[tgt[:, 1:] != PAD])
    want, got = ([list(map(int, h[0].tokens)) for h in hyps] for hyps in found)
    assert len({len(t) for t in want}) >= 3 and got == want  # varied outputs, the same
    texts = [[spaced(h[0].text) for h in hyps] for hyps in found]
    assert texts[0] == texts[1]
    assert torch.allclose(logits[0], logits[1], atol=1e-5)
    saved = Checkpoint.load(back).config
    assert saved["model"]["pre_norm"] == (cls != "MarianMTModel")
    # the length cap, which transformers has no key for, comes back too
    assert (saved["decode"]["max_len_a"], saved["decode"]["max_len_b"]) == (1.2, 7)


def test_the_native_card_names_translator_and_the_languages(native):
    card = (native[1] / "README.md").read_text(encoding="utf-8")
    assert "translator" in card and "- de" in card and "- en" in card
    assert native[2] in card and "positions:" in card


def test_a_multilingual_model_takes_marians_language_codes(tmp_path, capsys):
    """Target-language tags (<2fr>) are exported as Marian's >>fr<<, which MarianTokenizer
    takes from the start of a line: transformers then translates as --tgt-lang does."""
    from util import multiway_folder

    from translator.pretrained.export_hf import export_huggingface

    (tmp_path / "data").mkdir()
    data = multiway_folder(tmp_path / "data")
    raw = tiny_config(
        run_dir=str(tmp_path / "run"),
        data={"dir": str(data), "directions": ["en-de", "en-fr", "en-cs"]},
        model={"positions": "m2m100"},
        train={"max_steps": 100, "lr": 0.01, "valid_every": 10_000},
    )
    raw["data"].pop("dataset")
    Trainer(config_from_dict(raw)).run()
    export_huggingface(tmp_path / "run" / "last.pt", tmp_path / "hf", None)
    tok = transformers.AutoTokenizer.from_pretrained(tmp_path / "hf")
    model = transformers.AutoModelForSeq2SeqLM.from_pretrained(tmp_path / "hf").eval()
    lines = (data / "test.en").read_text(encoding="utf-8").splitlines()
    args = ["translate", "--checkpoint", str(tmp_path / "run" / "last.pt"), "--beam", "1"]
    args += ["--input", str(data / "test.en"), "--device", "cpu"]
    args += ["--max-len-a", "0", "--max-len-b", str(STEPS)]
    outputs = set()
    for lang in ("de", "fr", "cs"):
        out = tmp_path / f"out.{lang}"
        code, _, err = run_cli(capsys, *args, "--tgt-lang", lang, "--output", str(out))
        assert code == 0, err
        batch = tok([f">>{lang}<< {line}" for line in lines], padding=True, return_tensors="pt")
        assert tok.convert_ids_to_tokens(batch["input_ids"][:, 0]) == [f">>{lang}<<"] * len(lines)
        with torch.no_grad():
            found = model.generate(**batch, num_beams=1, max_new_tokens=STEPS + 1)
        texts = tok.batch_decode(found, skip_special_tokens=True)
        want = out.read_text(encoding="utf-8").splitlines()
        assert [spaced(t) for t in texts] == [spaced(t) for t in want]
        outputs.add(tuple(want))
    assert len(outputs) == 3  # the code changes the output
    assert ">>fr<<" in (tmp_path / "hf" / "README.md").read_text(encoding="utf-8")
    config = json.loads((tmp_path / "hf" / "tokenizer_config.json").read_text(encoding="utf-8"))
    assert (config["source_lang"], config["target_lang"]) == ("en", "mul")  # as OPUS-MT's


@pytest.mark.parametrize(
    "model, needles",
    [
        ({"type": "lstm"}, ("model.type lstm", "MarianMTModel", "M2M100")),
        ({"pre_norm": False}, ("model.positions interleaved", "halves", "MarianMTModel")),
        (
            {"pre_norm": True, "final_norm": False, "positions": "m2m100"},
            ("model.final_norm false", "M2M100ForConditionalGeneration"),
        ),
        ({"pre_norm": True, "positions": "halves"}, ("model.positions halves (needs m2m100)",)),
    ],
)
def test_each_layout_without_a_class_names_its_keys(model, needles):
    from translator.errors import UserError
    from translator.pretrained.export_hf import hf_class

    with pytest.raises(UserError) as err:
        hf_class(config_from_dict({"model": model}).model)
    for needle in needles:
        assert needle in err.value.message, (needle, err.value.message)


@pytest.mark.parametrize(
    "model, cls",
    [
        ({"pre_norm": False, "positions": "halves"}, "MarianMTModel"),
        ({"pre_norm": False, "positions": "halves", "final_norm": True}, "MarianMTModel"),
        ({"pre_norm": True, "positions": "m2m100"}, "M2M100ForConditionalGeneration"),
    ],
)
def test_the_layouts_with_a_class(model, cls):
    from translator.pretrained.export_hf import hf_class

    assert hf_class(config_from_dict({"model": model}).model) == cls


def test_a_layout_without_a_class_is_refused_in_one_line(three_steps, tmp_path, capsys):
    code, _, err = export(capsys, three_steps, tmp_path / "hf")
    one_line_error(code, err, "model.positions interleaved", "M2M100ForConditionalGeneration")
    assert not (tmp_path / "hf").exists()


@pytest.fixture(scope="module")
def imported(tmp_path_factory):
    """An imported tiny Marian checkpoint."""
    root = tmp_path_factory.mktemp("imported")
    import_pretrained(str(marian_folder(root / "hf")), root / "m.pt")
    return root / "m.pt"


def test_a_quantization_is_refused_in_one_line(imported, tmp_path, capsys):
    code, _, err = export(capsys, imported, tmp_path / "hf", "--quantization", "int8")
    one_line_error(code, err, "--quantization int8", "float32")
    assert not (tmp_path / "hf").exists()


def test_a_folder_translator_did_not_write_is_refused(imported, tmp_path, capsys):
    folder = tmp_path / "mine"
    folder.mkdir()
    (folder / "notes.txt").write_text("mine")
    code, _, err = export(capsys, imported, folder)
    one_line_error(code, err, "refusing to write there")
    assert [p.name for p in folder.iterdir()] == ["notes.txt"]
    (tmp_path / "file").write_text("mine")
    code, _, err = export(capsys, imported, tmp_path / "file")
    one_line_error(code, err, "is a file")
    assert (tmp_path / "file").read_text() == "mine"
    # its own export is replaced by the next, and no scratch folder is left beside it
    code, said, err = export(capsys, imported, tmp_path / "ours")
    assert code == 0 and "MarianMTModel" in said, err
    code, _, err = export(capsys, imported, tmp_path / "ours")
    assert code == 0, err
    # a file changed since is the user's (an edited card): kept, and the export refused
    (tmp_path / "ours" / "README.md").write_text("my card")
    code, _, err = export(capsys, imported, tmp_path / "ours")
    one_line_error(code, err, "README.md was changed since translator wrote it")
    assert (tmp_path / "ours" / "README.md").read_text() == "my card"
    (tmp_path / "ours" / "README.md").unlink()
    code, _, err = export(capsys, imported, tmp_path / "ours")
    assert code == 0, err
    assert json.loads((tmp_path / "ours" / "vocab.json").read_text())
    assert sorted(p.name for p in tmp_path.iterdir()) == ["file", "mine", "ours"]


def test_the_ctranslate2_export_carries_the_licence_too(imported, tmp_path, capsys):
    pytest.importorskip("ctranslate2")
    args = ["export", "--checkpoint", str(imported), "--output", str(tmp_path / "ct2")]
    code, _, err = run_cli(capsys, *args)
    assert code == 0, err
    assert (tmp_path / "ct2" / "LICENSE").read_text().startswith("CC-BY")
    manifest = json.loads((tmp_path / "ct2" / "manifest.json").read_text())
    assert manifest["source"]["files"]["LICENSE"].startswith("CC-BY")
    code, said, err = run_cli(capsys, "info", str(tmp_path / "ct2"))
    assert code == 0, err
    assert "licence: CC-BY 4.0 (test) (LICENSE)" in said and "tiny-marian" in said


def test_export_format_argos_reaches_the_argos_exporter(imported, tmp_path, capsys, monkeypatch):
    import translator.engines.export_argos as argos

    calls = []

    def fake(checkpoint, output, quantization, overrides):
        calls.append((checkpoint, output, quantization, overrides))
        return "packaged"

    monkeypatch.setattr(argos, "export_argos", fake)
    args = ["export", "--checkpoint", str(imported), "--format", "argos"]
    args += ["--output", str(tmp_path / "m.argosmodel"), "--quantization", "int8"]
    code, said, err = run_cli(capsys, *args, "--set", "decode.beam=3")
    assert code == 0, err
    assert said.strip() == "packaged"
    assert calls == [(imported, tmp_path / "m.argosmodel", "int8", ["decode.beam=3"])]


def test_set_changes_the_decoding_settings_not_the_layout(imported, tmp_path, capsys):
    code, said, err = export(capsys, imported, tmp_path / "hf", "--set", "decode.beam=3")
    assert code == 0 and "MarianMTModel" in said, err
    generation = json.loads((tmp_path / "hf" / "generation_config.json").read_text())
    assert generation["num_beams"] == 3
    for key in ("model.positions=interleaved", "train.max_steps=3", "seed=2"):
        sets = ["--set", "decode.beam=3", "--set", key]
        code, _, err = export(capsys, imported, tmp_path / "other", *sets)
        assert code == 2 and f"--set '{key}': export applies only" in err, err
        assert len(err.splitlines()) == 1, err
        assert not (tmp_path / "other").exists()
