"""`translator import` of a Hugging Face MarianMT folder, checked against transformers itself
on tiny random models (released weights cannot be downloaded here): the same log-probabilities
under teacher forcing, the same greedy outputs, and one-line errors for bad folders."""

import json
import shutil

import pytest
import torch
from checkpoints import needs_ct2
from commandline import run_cli
from pretrained import SENTENCES, demo_pairs, marian_folder, one_line_error
from util import guided_translate

from translator.engines.load import load_engine
from translator.models.checkpoint import Checkpoint
from translator.pretrained import import_pretrained
from translator.specials import BOS, EOS, PAD

transformers = pytest.importorskip("transformers")

VARIANTS = {
    "shared-tied": {},
    "separate-untied": {"share": False, "tie": False},
    "swish": {"activation": "swish"},
    "separate-vocabs": {"share": False, "separate_vocabs": True},
}
STEPS = 20  # greedy output tokens at most, <eos> not counted


@pytest.fixture(scope="module", params=list(VARIANTS))
def imported(request, tmp_path_factory):
    """(folder, checkpoint, transformers' model) of one variant."""
    root = tmp_path_factory.mktemp(request.param)
    folder = marian_folder(root / "hf", **VARIANTS[request.param])
    import_pretrained(str(folder), root / "imported.pt")
    hf = transformers.MarianMTModel.from_pretrained(folder).eval()
    return folder, root / "imported.pt", hf


def tables(ckpt: Checkpoint) -> tuple[torch.Tensor, torch.Tensor]:
    """translator id -> Marian id, source and target side."""
    ids = ckpt.source["ids"]
    return torch.tensor(ids["src"]), torch.tensor(ids["tgt"] or ids["src"])


def padded(rows: list[list[int]]) -> torch.Tensor:
    out = torch.full((len(rows), max(map(len, rows))), PAD)
    for i, row in enumerate(rows):
        out[i, : len(row)] = torch.tensor(row)
    return out


def test_teacher_forced_log_probs_match_transformers(imported):
    folder, path, hf = imported
    ckpt = Checkpoint.load(path)
    _, tokenizer, model = ckpt.build(str(path))
    model.eval()
    src_table, tgt_table = tables(ckpt)
    pairs = demo_pairs()["test"]
    assert len(pairs) == SENTENCES
    src = padded(tokenizer.encode_src([s for s, _ in pairs]))
    tgt = padded(tokenizer.encode_tgt([t for _, t in pairs]))
    with torch.no_grad():
        ours = torch.log_softmax(model(src, tgt[:, :-1]).float(), -1)
        theirs = hf(
            input_ids=src_table[src],
            attention_mask=(src != PAD).long(),
            decoder_input_ids=tgt_table[tgt[:, :-1]],  # <s> is Marian's start (its pad id)
        ).logits
        theirs = torch.log_softmax(theirs.float(), -1)[..., tgt_table]
    real = tgt[:, 1:] != PAD
    outputs = torch.arange(ours.size(-1)) != BOS  # (BOS's column repeats Marian's pad)
    diff = (ours - theirs)[real][:, outputs].abs().max().item()
    assert diff < 1e-4, diff
    assert ours[..., BOS].max() < -1000  # <s> takes no share of the softmax


def test_the_tokenizer_gives_marians_ids(imported):
    folder, path, _ = imported
    ckpt = Checkpoint.load(path)
    tokenizer = ckpt.build_tokenizer(str(path))
    src_table, _ = tables(ckpt)
    lines = [s for s, _ in demo_pairs()["test"]]
    theirs = transformers.MarianTokenizer.from_pretrained(folder)(lines)["input_ids"]
    ours = [src_table[ids].tolist() for ids in tokenizer.encode_src(lines)]
    assert ours == theirs


def generate(hf, folder, ckpt, lines):
    """transformers' greedy outputs as translator ids, <eos> dropped. Banned on both sides:
    Marian's <pad> (translator's <pad> and <s>, which its search never outputs) and <unk>
    (translator's default, decode.allow_unk false); generate bans nothing by itself.
    forced_eos_token_id ends a hypothesis at the limit as translator's search does."""
    src_table, tgt_table = tables(ckpt)
    config = hf.config
    src = padded(ckpt.build_tokenizer("x").encode_src(lines))
    vocabs = [folder / "target_vocab.json", folder / "vocab.json"]
    unk = json.loads(next(v for v in vocabs if v.is_file()).read_text())["<unk>"]
    with torch.no_grad():
        out = hf.generate(
            input_ids=src_table[src],
            attention_mask=(src != PAD).long(),
            num_beams=1,
            do_sample=False,
            max_new_tokens=STEPS + 1,
            bad_words_ids=[[config.pad_token_id], [unk]],
            forced_eos_token_id=config.eos_token_id,
            decoder_start_token_id=config.decoder_start_token_id,
        )
    back = {int(m): i for i, m in reversed(list(enumerate(tgt_table.tolist())))}
    found = []
    for row in out[:, 1:].tolist():
        ids = [back[m] for m in row]
        found.append(ids[: ids.index(EOS)] if EOS in ids else ids)
    return found, out


def test_greedy_outputs_match_generate(imported):
    folder, path, hf = imported
    lines = [s for s, _ in demo_pairs()["test"]]
    engine = load_engine(path, device="cpu")
    decode = engine.cfg.decode.model_copy(update={"beam": 1, "max_len_a": 0.0, "max_len_b": STEPS})
    ours = [hyps[0].tokens for hyps in guided_translate(engine, lines, decode=decode)]
    theirs, _ = generate(hf, folder, Checkpoint.load(path), lines)
    assert [list(map(int, t)) for t in ours] == theirs
    assert len({len(t) for t in theirs}) >= 3  # outputs of varied length, not one constant


def test_import_then_translate_on_the_command_line(imported, tmp_path, capsys):
    folder, _, hf = imported
    out = tmp_path / "m.pt"
    code, said, err = run_cli(capsys, "import", str(folder), "--output", str(out))
    assert code == 0, err
    assert "imported" in said and out.is_file()
    ckpt = Checkpoint.load(out)
    assert ckpt.source["files"]["LICENSE"].startswith("CC-BY")
    assert ckpt.source["folder"] == str(folder.resolve())
    lines = [s for s, _ in demo_pairs()["test"]][:20]
    (tmp_path / "in.de").write_text("".join(f"{s}\n" for s in lines), encoding="utf-8")
    args = ["translate", "--checkpoint", str(out), "--input", str(tmp_path / "in.de")]
    args += ["--output", str(tmp_path / "out.en"), "--device", "cpu", "--beam", "1"]
    args += ["--max-len-a", "0", "--max-len-b", str(STEPS)]
    code, _, err = run_cli(capsys, *args)
    assert code == 0, err
    got = (tmp_path / "out.en").read_text(encoding="utf-8").splitlines()
    _, generated = generate(hf, folder, ckpt, lines)
    # the start and what follows </s> cut off here: with separate vocabularies the tokenizer
    # looks its <pad> up in the source vocabulary, and would print the target's as text
    eos = hf.config.eos_token_id
    rows = [row[1:] for row in generated.tolist()]
    rows = [row[: row.index(eos)] if eos in row else row for row in rows]
    marian = transformers.MarianTokenizer.from_pretrained(folder)
    assert got == marian.batch_decode(rows, skip_special_tokens=True)
    # its own output is replaced on a second import
    code, _, err = run_cli(capsys, "import", str(folder), "--output", str(out))
    assert code == 0, err


def test_sharded_and_pickled_weights_import_alike(imported, tmp_path):
    folder, path, hf = imported
    sharded = tmp_path / "sharded"
    shutil.copytree(folder, sharded)
    (sharded / "model.safetensors").unlink()
    hf.save_pretrained(sharded, max_shard_size="30KB")
    assert (sharded / "model.safetensors.index.json").is_file()
    pickled = tmp_path / "pickled"
    shutil.copytree(folder, pickled)
    (pickled / "model.safetensors").unlink()
    torch.save(hf.state_dict(), pickled / "pytorch_model.bin")
    want = Checkpoint.load(path).model
    for other in (sharded, pickled):
        import_pretrained(str(other), tmp_path / f"{other.name}.pt")
        got = Checkpoint.load(tmp_path / f"{other.name}.pt").model
        assert got.keys() == want.keys()
        assert all(torch.equal(got[k], want[k]) for k in want)


def bad_folder(folder, tmp_path, name, change):
    """A copy of `folder` with one file changed (a callable of the copy)."""
    copy = tmp_path / name
    shutil.copytree(folder, copy)
    change(copy)
    return copy


def edit_json(name, **changes):
    def change(folder):
        data = json.loads((folder / name).read_text())
        (folder / name).write_text(json.dumps({**data, **changes}))

    return change


def add_vocab_entry(folder):
    vocab = json.loads((folder / "vocab.json").read_text())
    (folder / "vocab.json").write_text(json.dumps({**vocab, "▁extra": len(vocab)}))


@pytest.mark.parametrize(
    "name, change, needles",
    [
        (
            "t5",
            edit_json("config.json", model_type="t5", architectures=["T5ForConditionalGeneration"]),
            ("T5ForConditionalGeneration", "MarianMTModel"),
        ),
        ("no-target-spm", lambda f: (f / "target.spm").unlink(), ("target.spm is missing",)),
        ("no-vocab", lambda f: (f / "vocab.json").unlink(), ("vocab.json is missing",)),
        (
            "bad-spm",
            lambda f: (f / "source.spm").write_bytes(b"junk"),
            ("source.spm: not a readable sentencepiece model",),
        ),
        ("no-config", lambda f: (f / "config.json").unlink(), ("config.json is missing",)),
        (
            "no-weights",
            lambda f: (f / "model.safetensors").unlink(),
            ("model.safetensors or pytorch_model.bin is missing",),
        ),
        ("vocab-size", add_vocab_entry, ("rows but the vocabulary", "entries")),
        (
            "config-vocab-size",
            edit_json("config.json", vocab_size=7, decoder_vocab_size=7),
            ("rows but config.json's vocab_size is 7",),
        ),
        (
            "activation",
            edit_json("config.json", activation_function="gelu_new"),
            ("activation_function 'gelu_new'",),
        ),
    ],
)
def test_a_bad_folder_is_a_one_line_error(name, change, needles, imported, tmp_path, capsys):
    folder = bad_folder(imported[0], tmp_path, name, change)
    out = tmp_path / "m.pt"
    code, _, err = run_cli(capsys, "import", str(folder), "--output", str(out))
    one_line_error(code, err, *needles)
    assert not out.exists()


def test_a_hub_name_offline_is_a_one_line_error(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    import huggingface_hub.constants

    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", True)
    args = ["import", "Helsinki-NLP/opus-mt-de-en", "--output", str(tmp_path / "m.pt")]
    code, _, err = run_cli(capsys, *args)
    line = one_line_error(code, err, "Helsinki-NLP/opus-mt-de-en")
    reason = line[line.index("(") + 1 : line.index(") (hint")]
    assert reason.endswith(".") or reason.endswith(" ..."), reason  # whole words, not cut


def test_a_reason_is_its_first_sentence_cut_at_a_word():
    from translator.pretrained.files import first_sentence

    assert first_sentence("No  file\nhere. Try again later.") == "No file here."
    assert first_sentence("word " * 60, most=23) == "word word word word ..."


def test_an_output_translator_did_not_write_is_refused(imported, tmp_path, capsys):
    out = tmp_path / "notes.pt"
    out.write_text("mine")
    code, _, err = run_cli(capsys, "import", str(imported[0]), "--output", str(out))
    one_line_error(code, err, "refusing to replace")
    assert out.read_text() == "mine"
    from translator.models.checkpoint import load_checkpoint, save_checkpoint

    tuned = load_checkpoint(imported[1])  # a model fine-tuned from an import keeps its record
    tuned["train_state"] = {**(tuned.get("train_state") or {}), "progress": {"step": 20}}
    save_checkpoint(out, tuned)
    before = out.read_bytes()
    code, _, err = run_cli(capsys, "import", str(imported[0]), "--output", str(out))
    one_line_error(code, err, "trained for 20 steps", "refusing to replace")
    assert out.read_bytes() == before


def test_a_folder_given_as_output_is_named_as_other_commands_name_it(imported, tmp_path, capsys):
    folder = tmp_path / "adir"
    folder.mkdir()
    code, _, err = run_cli(capsys, "import", str(imported[0]), "--output", str(folder))
    one_line_error(code, err, f"{folder} is a folder; give the name of a file to write")
    assert list(folder.iterdir()) == []


def test_import_makes_the_folder_of_its_output(imported, tmp_path, capsys):
    """README's `--output models/opus-de-en.pt` works on a fresh checkout (no models/)."""
    out = tmp_path / "models" / "opus.pt"
    code, said, _ = run_cli(capsys, "import", str(imported[0]), "--output", str(out))
    assert code == 0 and out.is_file() and f"into {out}" in said
    blocked = tmp_path / "file"
    blocked.write_text("mine")
    code, _, err = run_cli(capsys, "import", str(imported[0]), "--output", str(blocked / "m.pt"))
    one_line_error(code, err, f"cannot write {blocked / 'm.pt'}")
    assert blocked.read_text() == "mine"


def test_the_vocabulary_table_travels_in_the_tokenizer_state(imported):
    from translator.data.tokenizer import Tokenizer
    from translator.data.vocab import tokenizer_from_state

    path = imported[1]
    state = Checkpoint.load(path).tokenizer
    tokenizer = tokenizer_from_state(state)
    assert tokenizer.state()["vocab"] == state["vocab"]
    assert tokenizer.fingerprint() == state["sha256"]
    changed = {**state, "vocab": {**state["vocab"], "src": state["vocab"]["src"][::-1]}}
    assert tokenizer_from_state(changed).fingerprint() != state["sha256"]
    plain = Tokenizer(state["src"], state["tgt"])  # without a table, sentencepiece's own ids
    assert plain.state().keys() == {"src", "tgt", "sha256"}


@needs_ct2
def test_the_ctranslate2_export_of_an_imported_model_gives_the_same_greedy_outputs(
    imported, tmp_path
):
    from translator.engines.export import export_checkpoint

    path = imported[1]
    export_checkpoint(path, "ctranslate2", "float32", tmp_path / "ct2", False, None)
    lines = [s for s, _ in demo_pairs()["test"]]
    ours, exported = load_engine(path, device="cpu"), load_engine(tmp_path / "ct2", device="cpu")
    decode = ours.cfg.decode.model_copy(update={"beam": 1, "max_len_a": 0.0, "max_len_b": STEPS})
    want = guided_translate(ours, lines, decode=decode)
    got = guided_translate(exported, lines, decode=decode)
    assert [h[0].tokens for h in got] == [h[0].tokens for h in want]
    assert [h[0].text for h in got] == [h[0].text for h in want]
