"""`translator import` of a native Marian model (.npz, decoder.yml, vocabulary .yml, .spm
files) and of an OPUS-MT release .zip, checked against CTranslate2's own Marian converter
on the same files (tiny random models: released weights cannot be downloaded here): the
same teacher-forced log-probabilities, greedy and beam outputs, and one-line errors for
bad inputs."""

import shutil
import tempfile
from pathlib import Path

import pytest
import torch
from commandline import run_cli
from pretrained import SENTENCES, demo_pairs, one_line_error
from pretrained_npz import NPZ, marian_npz_folder, release_zip, rewrite_model_yml, vocab_paths
from util import guided_translate

from translator.engines.load import load_engine
from translator.models.checkpoint import Checkpoint
from translator.pretrained import import_pretrained
from translator.specials import BOS, PAD

ctranslate2 = pytest.importorskip("ctranslate2")

VARIANTS = {
    # OPUS-MT's layout: post-norm, one vocabulary, every embedding tied
    "post-norm": {},
    "pre-norm-separate": {
        "separate_vocabs": True,
        "transformer-preprocess": "n",
        "transformer-postprocess": "da",
        "transformer-postprocess-top": "n",
        "transformer-ffn-activation": "relu",
        "tied-embeddings-all": False,
        "tied-embeddings": True,
    },
    "untied-output": {"tied-embeddings-all": False, "tied-embeddings-src": True},
}
STEPS = 20  # output tokens at most, <eos> not counted


@pytest.fixture(scope="module", params=list(VARIANTS))
def imported(request, tmp_path_factory):
    """(folder, checkpoint path, CTranslate2 translator of the same files) of one variant."""
    from ctranslate2.converters import MarianConverter

    root = tmp_path_factory.mktemp(request.param)
    changes = dict(VARIANTS[request.param])
    folder = marian_npz_folder(root / "marian", changes.pop("separate_vocabs", False), **changes)
    import_pretrained(str(folder), root / "imported.pt")
    MarianConverter(str(folder / NPZ), vocab_paths(folder)).convert(str(root / "ct2"))
    return folder, root / "imported.pt", ctranslate2.Translator(str(root / "ct2"), device="cpu")


def pieces(folder: Path, side: str, lines: list[str]) -> list[list[str]]:
    import sentencepiece as spm

    sp = spm.SentencePieceProcessor(model_file=str(folder / f"{side}.spm"))
    return sp.encode(lines, out_type=str)


def test_teacher_forced_log_probs_match_ctranslate2(imported):
    folder, path, ct2 = imported
    ckpt = Checkpoint.load(path)
    _, tokenizer, model = ckpt.build(str(path))
    model.eval()
    pairs = demo_pairs()["test"]
    assert len(pairs) == SENTENCES
    src = tokenizer.encode_src([s for s, _ in pairs])
    tgt = tokenizer.encode_tgt([t for _, t in pairs])  # <s> ... </s>
    width = max(map(len, src)), max(map(len, tgt))
    src_ids = torch.tensor([row + [PAD] * (width[0] - len(row)) for row in src])
    tgt_ids = torch.tensor([row + [PAD] * (width[1] - len(row)) for row in tgt])
    with torch.no_grad():
        ours = torch.log_softmax(model(src_ids, tgt_ids[:, :-1]).float(), -1)
    theirs = ct2.score_batch(
        pieces(folder, "source", [s for s, _ in pairs]),
        pieces(folder, "target", [t for _, t in pairs]),
    )
    diff = 0.0
    for i, row in enumerate(tgt):
        want = torch.tensor(theirs[i].log_probs)  # each target piece's, then </s>'s
        got = ours[i, torch.arange(len(row) - 1), torch.tensor(row[1:])]
        assert got.shape == want.shape
        diff = max(diff, (got - want).abs().max().item())
    assert diff < 1e-4, diff


def ours_and_theirs(imported, beam: int, allow_unk: bool):
    """Our best outputs and CTranslate2's, as target pieces, on the demo test sentences."""
    folder, path, ct2 = imported
    lines = [s for s, _ in demo_pairs()["test"]]
    engine = load_engine(path, device="cpu")
    update = {"beam": beam, "max_len_a": 0.0, "max_len_b": STEPS, "allow_unk": allow_unk}
    if beam > 1:
        update["len_penalty"] = 0.0  # ranked by log-probability on both sides
    decode = engine.cfg.decode.model_copy(update=update)
    table = engine.tokenizer.tgt
    ours = [
        [table.id_to_piece(i) for i in hyps[0].tokens]
        for hyps in guided_translate(engine, lines, decode=decode)
    ]
    results = ct2.translate_batch(
        pieces(folder, "source", lines),
        beam_size=beam,
        # (0 would stop at the first ended hypothesis; this keeps the ranking ours)
        length_penalty=1e-6,
        max_decoding_length=STEPS,
        min_decoding_length=0,  # an empty output is allowed, as in our search
        disable_unk=not allow_unk,
    )
    return ours, [r.hypotheses[0] for r in results]


def test_greedy_outputs_match_ctranslate2(imported):
    ours, theirs = ours_and_theirs(imported, beam=1, allow_unk=False)
    assert ours == theirs
    assert len({len(t) for t in theirs}) >= 3  # outputs of varied length, not one constant


def test_beam_outputs_match_ctranslate2(imported):
    # <unk> allowed on both sides: CTranslate2 bans tokens before its softmax, we after it,
    # so with a banned token the two searches would rank on different scores
    ours, theirs = ours_and_theirs(imported, beam=5, allow_unk=True)
    # At the length limit our search scores the </s> it forces and CTranslate2 cuts without
    # one, so hypotheses that reach it could rank differently: nearly all of these end first
    assert sum(len(pieces) < STEPS for pieces in theirs) >= 90
    assert ours == theirs


def test_the_ids_and_the_card_travel_in_the_checkpoint(imported):
    folder, path, _ = imported
    ckpt = Checkpoint.load(path)
    assert ckpt.source["format"] == "marian-npz"
    assert ckpt.source["model"] == NPZ
    assert ckpt.source["files"]["LICENSE"].startswith("CC-BY")
    ids = ckpt.source["ids"]
    table = ids["tgt"] or ids["src"]
    # <pad> and <s> have no Marian row; </s> is Marian's 0, <unk> its 1
    assert table[:4] == [-1, 1, -1, 0]
    assert sorted(table[4:]) == list(range(2, len(table) - 2))
    assert torch.all(ckpt.model["tgt_embed.weight"][[PAD, BOS]] == 0)  # Marian's zero start
    assert ckpt.model["generator.bias"][[PAD, BOS]].max() < -1000


def test_a_zip_and_an_npz_path_import_as_the_folder(imported, tmp_path, capsys):
    folder, path, _ = imported
    archive = release_zip(folder, tmp_path / "opus-2020-02-26.zip")
    temp = Path(tempfile.gettempdir())
    before = set(temp.glob("translator-import-*"))
    want = Checkpoint.load(path).model
    for source in (archive, folder / NPZ):
        out = tmp_path / f"{source.suffix[1:]}.pt"
        code, said, err = run_cli(capsys, "import", str(source), "--output", str(out))
        assert code == 0, err
        assert "Marian (native .npz)" in said
        ckpt = Checkpoint.load(out)
        assert ckpt.model.keys() == want.keys()
        assert all(torch.equal(ckpt.model[k], want[k]) for k in want)
        assert ckpt.source["files"]["README.md"].startswith("# opus-2020-02-26")
    ckpt = Checkpoint.load(tmp_path / "zip.pt")
    assert ckpt.source["file"] == str(archive.resolve())
    assert (ckpt.config["data"]["src_lang"], ckpt.config["data"]["tgt_lang"]) == ("de", "en")
    assert set(temp.glob("translator-import-*")) == before  # the extracted folder is gone


def test_translate_on_the_command_line_gives_ctranslate2s_text(imported, tmp_path, capsys):
    import sentencepiece as spm

    folder, _, ct2 = imported
    out = tmp_path / "m.pt"
    archive = release_zip(folder, tmp_path / "opus-2020-02-26.zip")
    code, _, err = run_cli(capsys, "import", str(archive), "--output", str(out))
    assert code == 0, err
    lines = [s for s, _ in demo_pairs()["test"]]
    (tmp_path / "in.de").write_text("".join(f"{s}\n" for s in lines), encoding="utf-8")
    args = ["translate", "--checkpoint", str(out), "--input", str(tmp_path / "in.de")]
    args += ["--output", str(tmp_path / "out.en"), "--device", "cpu", "--beam", "1"]
    args += ["--max-len-a", "0", "--max-len-b", str(STEPS)]
    code, _, err = run_cli(capsys, *args)
    assert code == 0, err
    got = (tmp_path / "out.en").read_text(encoding="utf-8").splitlines()
    results = ct2.translate_batch(
        pieces(folder, "source", lines),
        beam_size=1,
        max_decoding_length=STEPS,
        min_decoding_length=0,
        disable_unk=True,
    )
    # pieces target.spm lacks (the source's, in a joint vocabulary) stay as they are, their
    # word marks spaces, as transformers' MarianTokenizer writes them
    sp = spm.SentencePieceProcessor(model_file=str(folder / "target.spm"))
    want = [sp.decode_pieces(r.hypotheses[0]).replace("\u2581", " ").strip() for r in results]
    assert got == want
    assert len(set(want) - {""}) >= 10  # varied texts, not mostly empty ones


def without(name):
    return lambda f: (f / name).unlink()


def options(**changes):
    return lambda f: rewrite_model_yml(f, **changes)


def extra_vocab_entry(folder):
    vocab = folder / "opus.spm32k-spm32k.vocab.yml"
    entries = vocab.read_text(encoding="utf-8").splitlines()
    vocab.write_text("\n".join([*entries, f"extra: {len(entries)}"]) + "\n", encoding="utf-8")


@pytest.mark.parametrize(
    "name, change, needles",
    [
        ("no-decoder-yml", without("decoder.yml"), ("decoder.yml is missing",)),
        ("no-npz", without(NPZ), (f"{NPZ} is missing",)),
        ("no-vocab", without("opus.spm32k-spm32k.vocab.yml"), ("vocab.yml is missing",)),
        ("no-target-spm", without("target.spm"), ("target.spm is missing",)),
        (
            "average-attention",
            options(**{"transformer-decoder-autoreg": "average-attention"}),
            ("transformer-decoder-autoreg 'average-attention'",),
        ),
        ("ffn-depth", options(**{"transformer-ffn-depth": 3}), ("transformer-ffn-depth 3",)),
        ("right-left", options(**{"right-left": True}), ("right-left True",)),
        ("factors", options(**{"lemma-dim-emb": 8}), ("lemma-dim-emb 8",)),
        (
            "gelu",
            options(**{"transformer-ffn-activation": "gelu"}),
            ("transformer-ffn-activation 'gelu'",),
        ),
        ("vocab-size", extra_vocab_entry, ("rows but the vocabulary", "entries")),
    ],
)
def test_a_bad_model_is_a_one_line_error(name, change, needles, tmp_path, capsys):
    folder = marian_npz_folder(tmp_path / name)
    change(folder)
    out = tmp_path / "m.pt"
    code, _, err = run_cli(capsys, "import", str(folder), "--output", str(out))
    one_line_error(code, err, *needles)
    assert not out.exists()


def test_guided_alignment_is_ignored(tmp_path):
    folder = marian_npz_folder(tmp_path / "m")
    import_pretrained(str(folder), tmp_path / "plain.pt")
    rewrite_model_yml(folder, **{"guided-alignment": "align.txt"})
    rewrite_model_yml(folder, **{"transformer-guided-alignment-layer": "1"})
    import_pretrained(str(folder), tmp_path / "aligned.pt")
    a, b = Checkpoint.load(tmp_path / "plain.pt"), Checkpoint.load(tmp_path / "aligned.pt")
    assert all(torch.equal(a.model[k], b.model[k]) for k in a.model)


def test_a_zip_that_is_not_a_marian_release_is_a_one_line_error(tmp_path, capsys):
    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "README.md").write_text("# not a model\n")
    archive = shutil.make_archive(str(tmp_path / "notes"), "zip", folder)
    broken = tmp_path / "broken.zip"
    broken.write_bytes(b"PK not really a zip")
    for source, needle in ((archive, "no Marian model (.npz)"), (broken, "not a readable .zip")):
        out = tmp_path / "m.pt"
        code, _, err = run_cli(capsys, "import", str(source), "--output", str(out))
        one_line_error(code, err, str(source), needle)
        assert not out.exists()


def test_a_zip_missing_a_file_is_named_as_the_zip(imported, tmp_path, capsys):
    """The error names the .zip, not the temporary folder it was read from, and info
    names the .zip an import came from."""
    folder, _, _ = imported
    partial = tmp_path / "partial"
    shutil.copytree(folder, partial)
    (partial / "decoder.yml").unlink()
    archive = shutil.make_archive(str(tmp_path / "partial"), "zip", partial)
    code, _, err = run_cli(capsys, "import", archive, "--output", str(tmp_path / "m.pt"))
    one_line_error(code, err, f"{archive}: decoder.yml is missing")
    assert tempfile.gettempdir() not in err.replace(str(tmp_path), "")
    whole = release_zip(folder, tmp_path / "whole.zip")
    code, _, err = run_cli(capsys, "import", str(whole), "--output", str(tmp_path / "w.pt"))
    assert code == 0, err
    code, said, _ = run_cli(capsys, "info", str(tmp_path / "w.pt"))
    assert f"origin: imported from {whole.resolve()}" in said


def test_vocabulary_files_read_as_ctranslate2_reads_them(tmp_path):
    from ctranslate2.converters.marian import load_vocab

    from translator.pretrained.marian_npz import read_vocab

    path = tmp_path / "vocab.yml"
    lines = ["</s>: 0", "<unk>: 1", "true: 2", "1: 3", '"\\"": 4', "'it''s': 5", '":": 6']
    lines += ["? " + "▁" + "x" * 1100, ": 7", "▁Haus: 8"]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    vocab = read_vocab(path)
    assert sorted(vocab, key=vocab.get) == load_vocab(str(path))
    assert vocab["true"] == 2 and vocab["1"] == 3 and vocab["it's"] == 5


def test_a_sentencepiece_model_as_the_vocabulary(tmp_path):
    """Marian also takes a sentencepiece model as the vocabulary: its own ids are Marian's."""
    import numpy as np
    import sentencepiece as spm
    import yaml
    from pretrained_npz import model_yml, random_arrays, with_model_yml

    folder = marian_npz_folder(tmp_path / "m")
    size = spm.SentencePieceProcessor(model_file=str(folder / "source.spm")).get_piece_size()
    shutil.copy(folder / "source.spm", folder / "joint.spm")
    shutil.copy(folder / "source.spm", folder / "target.spm")
    options = {**model_yml(), "dim-vocabs": [size, size]}
    np.savez(folder / NPZ, **with_model_yml(random_arrays(options, size, size, 0, 2, 5.0), options))
    decoder = {"models": [NPZ], "vocabs": ["joint.spm", "joint.spm"]}
    (folder / "decoder.yml").write_text(yaml.safe_dump(decoder), encoding="utf-8")
    import_pretrained(str(folder), tmp_path / "m.pt")
    ckpt = Checkpoint.load(tmp_path / "m.pt")
    table = ckpt.source["ids"]["src"]
    sp = spm.SentencePieceProcessor(model_file=str(folder / "joint.spm"))
    tokenizer = ckpt.build_tokenizer(str(tmp_path / "m.pt"))
    lines = [s for s, _ in demo_pairs()["test"]][:20]
    ours = [[table[i] for i in row] for row in tokenizer.encode_src(lines)]
    assert ours == [ids + [sp.eos_id()] for ids in sp.encode(lines)]
