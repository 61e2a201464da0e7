"""`translator export` to CTranslate2 and --quantize int8: the exported model gives the
PyTorch model's output, folders that are not whole are refused in one line, the
recurrent families say they cannot export, and a missing ctranslate2 names the extra."""

import json
import sys
from dataclasses import replace
from pathlib import Path

import pytest
import torch
from util import cli, tiny_config, user_error

from translator.config import config_from_dict
from translator.data.corpus import load_split
from translator.data.tokenizer import Tokenizer
from translator.decode.evaluate import bleu
from translator.decode.translator import Translation, in_batches
from translator.engines.ct2 import ExportedTranslator
from translator.engines.export import export_checkpoint
from translator.engines.load import load_engine
from translator.engines.quantize import QUANTIZED_TYPES
from translator.models.checkpoint import Checkpoint
from translator.models.family import build_model
from translator.specials import BOS, PAD, UNK
from translator.train.trainer import Trainer

try:
    import ctranslate2  # noqa: F401

    HAVE_CT2 = True
except ImportError:
    HAVE_CT2 = False
needs_ct2 = pytest.mark.skipif(
    not HAVE_CT2,
    reason="ctranslate2 is not installed (the `ctranslate2` extra; make install has it)",
)

ROOT = Path(__file__).resolve().parent.parent
# Trained enough (a minute on 2 busy cores) that its outputs are words of varied length,
# not a constant: agreement on such outputs says something.
DEMO = tiny_config(
    seed=5,
    data={"demo_train": 600, "demo_dev": 10, "demo_test": 100},
    tokenizer={"vocab_size": 500},
    model={"d_model": 64, "ff_dim": 128, "enc_layers": 2, "dec_layers": 2},
    train={"max_steps": 100, "batch_tokens": 1000, "lr": 0.005, "warmup_steps": 30, "threads": 2},
    decode={"beam": 5, "max_len_a": 1.5, "max_len_b": 5, "len_penalty": 0.6},
)


def agreement(a: list, b: list) -> float:
    return sum(x[0].tokens == y[0].tokens for x, y in zip(a, b)) / len(a)


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    """A Transformer trained on the demo corpus, its test sources and references."""
    root = tmp_path_factory.mktemp("export")
    Trainer(config_from_dict({**DEMO, "run_dir": str(root / "run")})).run()
    ckpt = root / "run" / "best.pt"
    pytorch = load_engine(str(ckpt), "cpu")
    pairs = load_split(pytorch.cfg.data, "test", pytorch.cfg.seed)
    texts = [r[0].text for r in pytorch.translate([s for s, _ in pairs])]
    assert sum(bool(t) for t in texts) > 90 and len(set(texts)) > 30, texts[:5]
    return root, ckpt, pytorch, [s for s, _ in pairs], [t for _, t in pairs]


def untrained(tmp_path: Path, joint: bool = True, **model) -> Path:
    """A checkpoint of a freshly initialised model (what an export or a quantization does
    with the weights does not depend on training)."""
    raw = tiny_config(model=model, tokenizer={"joint": joint}, run_dir=str(tmp_path / "run"))
    if model.get("type", "transformer") != "transformer":
        for key in ("d_model", "heads", "ff_dim"):
            raw["model"].pop(key)
    cfg = config_from_dict(raw)
    tokenizer = Tokenizer.train(load_split(cfg.data, "train", cfg.seed), cfg.tokenizer, cfg.seed)
    torch.manual_seed(0)
    net = build_model(cfg.model, tokenizer.src_vocab_size, tokenizer.tgt_vocab_size, joint)
    path = tmp_path / "init.pt"
    Checkpoint(config=cfg.to_dict(), tokenizer=tokenizer.state(), model=net.state_dict()).save(path)
    return path


def renormalized_like_ctranslate2(model):
    """The model with CTranslate2's one difference (engines/ct2.py): the banned tokens are
    removed before the softmax, so log-probabilities are renormalised over the others."""
    banned = [PAD, BOS, UNK]

    def log_probs(prev, state):
        logits, state = model.step(prev, state)
        logits = logits.float().clone()
        logits[:, banned] = float("-inf")
        return torch.log_softmax(logits, dim=-1), state

    model.log_probs = log_probs
    return model


@needs_ct2
@pytest.mark.parametrize("beam", [1, 5])
def test_the_float32_export_gives_the_pytorch_output(demo, beam):
    """Greedy outputs are the same. A beam's ranking can change where a model gives the
    banned tokens real mass (as a briefly trained one may), so the beam's reference is our
    search over log-probabilities renormalised as CTranslate2's are."""
    root, ckpt, pytorch, sources, _ = demo
    _, folder = export_checkpoint(ckpt, "ctranslate2", "float32", root / "f32")
    exported = ExportedTranslator(folder)
    dc = replace(pytorch.cfg.decode, beam=beam, batch_size=16)
    theirs = exported.translate(sources, dc)
    if beam == 1:
        ours = pytorch.translate(sources, dc)
        assert [x[0].tokens for x in ours] == [y[0].tokens for y in theirs]
        # GNMT-normalised as ours; CTranslate2 renormalises over the tokens it may output,
        # so its log-probabilities are higher, by the mass the model gives the banned ones.
        assert all(x[0].score <= y[0].score + 1e-4 for x, y in zip(ours, theirs))
        return
    reference = load_engine(str(ckpt), "cpu")
    renormalized_like_ctranslate2(reference.model)
    ours = reference.translate(sources, dc)
    assert agreement(ours, theirs) >= 0.99
    same = [(x[0], y[0]) for x, y in zip(ours, theirs) if x[0].tokens == y[0].tokens]
    gap = max(abs(x.score - y.score) for x, y in same)
    assert gap < 0.02, gap  # float32 kernels of two libraries, summed over a sentence


@needs_ct2
def test_nbest_lists_agree_and_come_best_first(demo):
    root, ckpt, pytorch, sources, _ = demo
    _, folder = export_checkpoint(ckpt, "ctranslate2", "float32", root / "nbest")
    dc = replace(pytorch.cfg.decode, beam=4)
    ours = pytorch.translate(sources[:30], dc, nbest=3)
    theirs = ExportedTranslator(folder).translate(sources[:30], dc, nbest=3)
    assert all(len(h) == 3 for h in theirs)
    assert all([t.score for t in h] == sorted((t.score for t in h), reverse=True) for h in theirs)
    same = sum([t.tokens for t in x] == [t.tokens for t in y] for x, y in zip(ours, theirs))
    assert same >= 0.9 * len(ours)


@needs_ct2
def test_batches_decoded_side_by_side_give_the_same_output_in_order(demo):
    """An exported model on a CPU runs one batch per core at once; the result must not
    depend on how many run together, and each line keeps its own translation."""
    root, ckpt, pytorch, sources, _ = demo
    _, folder = export_checkpoint(ckpt, "ctranslate2", "float32", root / "workers")
    exported = ExportedTranslator(folder)
    dc = replace(pytorch.cfg.decode, beam=3, batch_size=8)
    found = {}
    for workers in (1, 3):
        exported.workers = workers
        found[workers] = [[(t.text, t.tokens) for t in h] for h in exported.translate(sources, dc)]
    assert found[3] == found[1]
    single = [exported.translate([line], dc)[0][0].text for line in sources[:5]]
    assert [h[0][0] for h in found[3][:5]] == single


@needs_ct2
def test_loading_an_export_leaves_torch_its_threads(demo):
    """CTranslate2 sets the loading thread's OpenMP count to its own; PyTorch work after a
    load (a PyTorch engine beside it, as in an ensemble or a benchmark) keeps its threads."""
    root, ckpt, *_ = demo
    _, folder = export_checkpoint(ckpt, "ctranslate2", "int8", root / "threads")
    before = torch.get_num_threads()
    try:
        torch.set_num_threads(2)
        exported = ExportedTranslator(folder)
        assert exported.workers == 2
        assert torch.get_num_threads() == 2
    finally:
        torch.set_num_threads(before)


def test_input_smaller_than_the_workers_batches_is_split_between_them():
    """Fewer lines than `workers` batches: one batch per worker, answers in input order."""

    class Words:
        def encode_src(self, lines):
            return [[len(w) for w in line.split()] for line in lines]

    seen: list[int] = []

    def run_batch(ids, dc, nbest):
        seen.append(len(ids))
        return [[Translation(str(sum(s)), 0.0)] for s in ids]

    lines = ["a bb", "", "ccc", "dddd e", "ff ggg hhhh", "i"]
    dc = replace(config_from_dict(tiny_config()).decode, batch_size=64)
    for workers, sizes in ((1, [5]), (2, [3, 2]), (8, [1] * 5)):
        seen.clear()
        out = in_batches(Words(), lines, 100, dc, 1, False, run_batch, workers)
        assert [h[0].text for h in out] == ["3", "", "3", "5", "9", "1"]
        assert sorted(seen, reverse=True) == sizes


@needs_ct2
@pytest.mark.parametrize(
    "model",
    [
        {"pre_norm": False},
        {"tie_embeddings": False},
        {"pre_norm": False, "tie_embeddings": False},
    ],
    ids=["post-norm", "untied", "post-norm-untied"],
)
@pytest.mark.parametrize("joint", [True, False], ids=["joint", "separate"])
def test_every_transformer_variant_exports_exactly(tmp_path, model, joint):
    """The same log-probabilities for reference targets (teacher forced), the same greedy
    output. (Beam agreement is checked on the trained model: an untrained one is full of
    near-ties that float rounding decides.)"""
    ckpt = untrained(tmp_path, joint, **model)
    pytorch = load_engine(str(ckpt), "cpu")
    _, folder = export_checkpoint(ckpt, "ctranslate2", "float32", tmp_path / "out")
    exported = ExportedTranslator(folder)
    assert exported.tokenizer.joint == joint
    pairs = load_split(pytorch.cfg.data, "test", pytorch.cfg.seed)
    sources, refs = [s for s, _ in pairs], [t for _, t in pairs]
    tok = pytorch.tokenizer
    src_ids, tgt_ids = tok.encode_src(sources), tok.encode_tgt(refs)
    pieces = [[tok.src.id_to_piece(i) for i in s] for s in src_ids]
    targets = [[tok.tgt.id_to_piece(i) for i in t[1:-1]] for t in tgt_ids]
    theirs = exported.engine.score_batch(pieces, targets, max_input_length=0)
    for s, t, result in zip(src_ids, tgt_ids, theirs):
        with torch.no_grad():
            logits = pytorch.model(torch.tensor([s]), torch.tensor([t[:-1]]))
        ours = logits.log_softmax(-1)[0].gather(1, torch.tensor(t[1:])[:, None])[:, 0]
        assert torch.allclose(ours, torch.tensor(result.log_probs), atol=1e-4)
    dc = replace(pytorch.cfg.decode, beam=1)
    assert agreement(pytorch.translate(sources, dc), exported.translate(sources, dc)) == 1.0


@needs_ct2
def test_int8_stays_close_to_float32(demo):
    """int8 in CTranslate2 (int8, int8_float32) and in PyTorch changes some outputs but
    not most of them: BLEU of the int8 output against the float32 output stays high.
    (The test model is trained for seconds, its BLEU against the references is near 0,
    and int8 changes it by noise: "within 0.5 BLEU" would hold whatever int8 did. On a
    1,000-pair demo model trained 300 steps (BLEU 12.3 greedy, 12.2 beam 5) int8 moved
    BLEU by -0.2 (CTranslate2) and -0.8 (PyTorch) greedy, +0.9 and +0.6 with beam 5.)"""
    root, ckpt, pytorch, sources, refs = demo
    dc = replace(pytorch.cfg.decode, beam=1)
    base = [r[0].text for r in pytorch.translate(sources, dc)]
    outputs = {"pytorch-int8": load_engine(ckpt, "cpu", "int8").translate(sources, dc)}
    for scheme in ("int8", "int8_float32"):
        manifest, folder = export_checkpoint(ckpt, "ctranslate2", scheme, root / scheme)
        assert manifest["quantization"] == scheme
        outputs[scheme] = ExportedTranslator(folder).translate(sources, dc)
    for name, hyps in outputs.items():
        assert bleu([r[0].text for r in hyps], base) > 50, name


@pytest.mark.parametrize("family", ["lstm", "bahdanau", "luong", "transformer"])
def test_pytorch_int8_quantizes_every_family_and_still_translates(tmp_path, family):
    small = {} if family == "transformer" else {"hidden_size": 16, "embed_dim": 16}
    translator = load_engine(untrained(tmp_path, type=family, **small), "auto", "int8")
    modules = list(translator.model.modules())
    assert not [m for m in modules if type(m) in QUANTIZED_TYPES]  # no float Linear/LSTM left
    quantized = {type(m).__name__ for m in modules if ".quantized." in type(m).__module__}
    assert "Linear" in quantized, quantized
    if family != "transformer":  # the encoder's nn.LSTM and (with attention) the decoder cells
        assert "LSTM" in quantized, quantized
        assert "LSTMCell" in quantized or family == "lstm", quantized
    dc = replace(translator.cfg.decode, beam=2)
    out = translator.translate(["Ein Hund läuft.", ""], dc, nbest=2)
    assert len(out) == 2 and len(out[0]) == 2 and out[1][0].text == ""


@needs_ct2
def test_the_folder_holds_everything_to_translate(demo, tmp_path):
    root, ckpt, pytorch, sources, _ = demo
    manifest, folder = export_checkpoint(ckpt, "ctranslate2", "float32", tmp_path / "x")
    on_disk = json.loads((folder / "manifest.json").read_text())
    assert on_disk == manifest
    assert manifest["format_version"] == 1 and manifest["quantization"] == "float32"
    assert manifest["source_checkpoint"]["path"] == str(ckpt.resolve())
    assert manifest["tokenizer"]["sha256"] == pytorch.tokenizer.fingerprint()
    assert manifest["decode"]["beam"] == 5 and manifest["config"]["model"]["type"] == "transformer"
    assert {"model.bin", "config.json", "source.model", "manifest.json"} <= {
        p.name for p in folder.iterdir()
    }
    assert not list(tmp_path.glob(".x.tmp-*"))  # built aside, renamed whole
    ckpt.rename(ckpt.with_suffix(".moved"))  # the folder alone is enough
    try:
        out = ExportedTranslator(folder).translate(sources[:5])
        assert all(r[0].text for r in out)
    finally:
        ckpt.with_suffix(".moved").rename(ckpt)


@needs_ct2
def test_translate_and_eval_take_the_folder_like_a_checkpoint(demo, tmp_path):
    root, ckpt, pytorch, sources, _ = demo
    folder = tmp_path / "exp"
    result = cli("export", "--checkpoint", str(ckpt), "--output", str(folder))
    assert result.returncode == 0, result.stderr
    assert "exported to" in result.stdout
    lines = ["Ein Hund läuft.", "", "Die Katze schläft."]
    expect = [r[0].text for r in pytorch.translate(lines, replace(pytorch.cfg.decode, beam=1))]
    out = cli(
        "translate", "--checkpoint", str(folder), "--beam", "1", stdin="\n".join(lines) + "\n"
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == expect
    nbest = cli("translate", "--checkpoint", str(folder), "--nbest", "2", lines[0])
    assert nbest.returncode == 0 and len(nbest.stdout.splitlines()) == 2, nbest.stderr
    scores = cli("eval", "--checkpoint", str(folder), "--json", "--beam", "1")
    assert scores.returncode == 0, scores.stderr
    ours = cli("eval", "--checkpoint", str(ckpt), "--json", "--beam", "1")
    assert json.loads(scores.stdout)["bleu"] == json.loads(ours.stdout)["bleu"]
    assert json.loads(scores.stdout)["n"] == 100


def test_eval_and_translate_quantize_on_request(demo):
    root, ckpt, pytorch, sources, _ = demo
    both = cli("translate", "--checkpoint", str(ckpt), "--checkpoint", str(ckpt), "--ensemble",
               "--quantize", "int8", "Ein Hund läuft.")  # fmt: skip
    assert both.returncode == 0 and len(both.stdout.splitlines()) == 1, both.stderr
    result = cli("eval", "--checkpoint", str(ckpt), "--quantize", "int8", "--json", "--beam", "1")
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["n"] == 100
    out = cli("translate", "--checkpoint", str(ckpt), "--quantize", "int8", sources[0], "")
    assert out.returncode == 0, out.stderr
    assert len(out.stdout.splitlines()) == 2 and out.stdout.splitlines()[0]


def assert_one_line_error(result, *needles):
    assert result.returncode == 2, (result.returncode, result.stderr[-2000:])
    assert "Traceback" not in result.stderr, result.stderr
    last = result.stderr.strip().splitlines()[-1]
    assert last.startswith("error: ")
    for needle in needles:
        assert needle in last, (needle, last)


@pytest.mark.parametrize("family", ["lstm", "bahdanau", "luong"])
def test_recurrent_checkpoints_say_which_families_export(tmp_path, family):
    path = untrained(tmp_path, type=family, hidden_size=16, embed_dim=16)
    message = user_error(export_checkpoint, path, "ctranslate2", "float32", tmp_path / "out")
    assert f"model.type {family} cannot be exported" in message and "only transformer" in message
    assert not (tmp_path / "out").exists()
    result = cli("export", "--checkpoint", str(path), "--output", str(tmp_path / "out"))
    assert_one_line_error(result, "only transformer")


@needs_ct2
def test_broken_export_folders_are_one_line_errors(demo, tmp_path):
    root, ckpt, *_ = demo
    _, good = export_checkpoint(ckpt, "ctranslate2", "float32", tmp_path / "good")
    assert "manifest.json is missing" in user_error(ExportedTranslator, tmp_path)
    broken = {
        "no-model": lambda f: (f / "model.bin").unlink(),
        "truncated": lambda f: (f / "model.bin").write_bytes((f / "model.bin").read_bytes()[:100]),
        "garbage-manifest": lambda f: (f / "manifest.json").write_text("{not json"),
        "garbage-model": lambda f: (f / "model.bin").write_bytes(
            b"\x07" * (f / "model.bin").stat().st_size
        ),
        "other-tokenizer": lambda f: (f / "source.model").write_bytes(
            (f / "source.model").read_bytes()[::-1]
        ),
    }
    needles = {
        "no-model": "model.bin is missing",
        "truncated": "truncated or replaced",
        "garbage-manifest": "not a readable export manifest",
        "garbage-model": "CTranslate2 cannot load",
        "other-tokenizer": "fingerprint mismatch",
    }
    for name, damage in broken.items():
        folder = tmp_path / name
        export_checkpoint(ckpt, "ctranslate2", "float32", folder)
        damage(folder)
        assert needles[name] in user_error(ExportedTranslator, folder), name
    result = cli("translate", "--checkpoint", str(tmp_path / "no-model"), "Ein Hund.")
    assert_one_line_error(result, "model.bin is missing")
    result = cli("eval", "--checkpoint", str(tmp_path / "garbage-model"))
    assert_one_line_error(result, "CTranslate2 cannot load")


@needs_ct2
def test_option_mistakes_are_one_line_errors(demo, tmp_path):
    root, ckpt, *_ = demo
    _, folder = export_checkpoint(ckpt, "ctranslate2", "int8", tmp_path / "q")
    plot = cli(
        "translate",
        "--checkpoint",
        str(folder),
        "--plot-attention",
        str(tmp_path / "a.png"),
        "Ein Hund.",
    )
    assert_one_line_error(plot, "--plot-attention needs the PyTorch checkpoint")
    again = cli("translate", "--checkpoint", str(folder), "--quantize", "int8", "Ein Hund.")
    assert_one_line_error(again, "quantized when it was exported")
    bad = cli("translate", "--checkpoint", str(ckpt), "--quantize", "int4", "Ein Hund.")
    assert_one_line_error(bad, "--quantize int4")
    fmt = cli(
        "export", "--checkpoint", str(ckpt), "--format", "onnx", "--output", str(tmp_path / "o")
    )
    assert_one_line_error(fmt, "--format onnx")
    q = cli(
        "export",
        "--checkpoint",
        str(ckpt),
        "--quantization",
        "int3",
        "--output",
        str(tmp_path / "o"),
    )
    assert_one_line_error(q, "--quantization int3")
    (tmp_path / "busy").mkdir()
    (tmp_path / "busy" / "notes.txt").write_text("mine")
    busy = cli("export", "--checkpoint", str(ckpt), "--output", str(tmp_path / "busy"))
    assert_one_line_error(busy, "holds no exported model")
    assert (tmp_path / "busy" / "notes.txt").read_text() == "mine"
    sample = cli("translate", "--checkpoint", str(folder), "--sampling", "topk:5", "Ein Hund.")
    assert_one_line_error(sample, "--sampling", "exported model")
    ens = cli(
        "translate", "--checkpoint", str(ckpt), "--checkpoint", str(folder), "--ensemble", "Ein Hund."
    )  # fmt: skip
    assert_one_line_error(ens, "--ensemble", "exported folder")


@needs_ct2
def test_an_export_replaces_an_earlier_one_whole(demo, tmp_path):
    root, ckpt, *_ = demo
    export_checkpoint(ckpt, "ctranslate2", "float32", tmp_path / "m")
    small, _ = export_checkpoint(ckpt, "ctranslate2", "int8", tmp_path / "m")
    assert json.loads((tmp_path / "m" / "manifest.json").read_text())["quantization"] == "int8"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m"]
    assert small["files"]["model.bin"] < 0.5 * (ckpt.stat().st_size)


def test_a_missing_ctranslate2_names_the_extra(demo, tmp_path, monkeypatch):
    root, ckpt, *_ = demo
    _, folder = export_checkpoint(ckpt, "ctranslate2", "float32", tmp_path / "e")
    monkeypatch.setitem(sys.modules, "ctranslate2", None)  # import ctranslate2 now fails
    for call in (
        lambda: export_checkpoint(ckpt, "ctranslate2", "float32", tmp_path / "f"),
        lambda: ExportedTranslator(folder),
    ):
        message = user_error(call)
        assert 'pip install "translator[ctranslate2]"' in message and "ctranslate2" in message
    extras = __import__("tomllib").loads((ROOT / "pyproject.toml").read_text())
    assert any(
        d.startswith("ctranslate2")
        for d in extras["project"]["optional-dependencies"]["ctranslate2"]
    )
    install = [
        line for line in (ROOT / "Makefile").read_text().splitlines() if "pip install" in line
    ]
    assert any("ctranslate2" in line and "-e" in line for line in install), install
