"""`translator export` to CTranslate2 and --quantize int8: the exported model gives the
PyTorch model's output, folders that are not whole are refused in one line, the
recurrent families say they cannot export, and a missing ctranslate2 names the extra."""

import pytest
import torch
from checkpoints import agreement, needs_ct2, untrained
from util import ROOT, guided_translate, tiny_config

from translator.config import config_from_dict
from translator.data.corpus import load_split
from translator.decode.request import DecodeRequest
from translator.decode.translator import Translation, in_batches
from translator.engines.ct2 import ExportedTranslator
from translator.engines.engine import Engine
from translator.engines.export import export_checkpoint
from translator.engines.load import load_engine
from translator.engines.quantize import QUANTIZED_TYPES


def test_input_smaller_than_the_workers_batches_is_split_between_them():
    """Fewer lines than `workers` batches: one batch per worker, answers in input order."""

    class Words:
        def encode_src(self, lines):
            return [[len(w) for w in line.split()] for line in lines]

    seen: list[int] = []

    def run_batch(ids, request):
        assert request.guides is None
        seen.append(len(ids))
        return [[Translation(str(sum(s)), 0.0)] for s in ids]

    lines = ["a bb", "", "ccc", "dddd e", "ff ggg hhhh", "i"]
    dc = config_from_dict(tiny_config()).decode.replace(batch_size=64)
    for workers, sizes in ((1, [5]), (2, [3, 2]), (8, [1] * 5)):
        seen.clear()
        out = in_batches(Words(), lines, 100, DecodeRequest(dc), (), False, run_batch, workers)
        assert [h[0].text for h in out] == ["3", "", "3", "5", "9", "1"]
        assert sorted(seen, reverse=True) == sizes


@needs_ct2
@pytest.mark.parametrize(
    "model",
    [
        {"pre_norm": False},
        {"tie_embeddings": False},
        {"pre_norm": False, "tie_embeddings": False},
        {"enc_layers": 3, "dec_layers": 1},  # a distilled student's shape
    ],
    ids=["post-norm", "untied", "post-norm-untied", "deep-shallow"],
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
    dc = pytorch.cfg.decode.replace(beam=1)
    assert (
        agreement(
            pytorch.translate(sources, DecodeRequest(dc)),
            exported.translate(sources, DecodeRequest(dc)),
        )
        == 1.0
    )


@needs_ct2
@pytest.mark.parametrize("beam", [1, 3])
def test_both_engines_go_on_from_a_prefix_alike(tmp_path, beam):
    """CTranslate2's target_prefix and our search: the same outputs, each beginning with its
    line's prefix (none for some lines, in the same batch)."""
    ckpt = untrained(tmp_path)
    pytorch = load_engine(str(ckpt), "cpu")
    _, folder = export_checkpoint(ckpt, "ctranslate2", "float32", tmp_path / "out")
    exported = load_engine(str(folder), "cpu")
    pairs = load_split(pytorch.cfg.data, "test", pytorch.cfg.seed)[:24]
    sources = [s for s, _ in pairs]
    prefixes = [" ".join(t.split()[: i % 4]) or None for i, (_, t) in enumerate(pairs)]
    dc = pytorch.cfg.decode.replace(beam=beam)
    ours = guided_translate(pytorch, sources, prefixes, decode=dc)
    theirs = guided_translate(exported, sources, prefixes, decode=dc)
    assert agreement(ours, theirs) >= (1.0 if beam == 1 else 0.9)
    for hyps, prefix in zip(ours + theirs, prefixes + prefixes):
        assert hyps[0].text.startswith(prefix or "")


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
    dc = translator.cfg.decode.replace(beam=2)
    out = translator.translate(["Ein Hund läuft.", ""], DecodeRequest(dc, 2))
    assert len(out) == 2 and len(out[0]) == 2 and out[1][0].text == ""


@needs_ct2
def test_every_engine_offers_the_engine_interface(tmp_path):
    """A checkpoint, an ensemble and an export all open through load_engine as an Engine,
    describe themselves with the same keys and translate the same lines in order."""
    ckpt = untrained(tmp_path)
    _, folder = export_checkpoint(ckpt, "ctranslate2", "float32", tmp_path / "out")
    engines = {
        "pytorch": load_engine(ckpt, "cpu"),
        "ensemble": load_engine([ckpt, ckpt], "cpu", ensemble=True),
        "ctranslate2": load_engine(folder, "cpu"),
    }
    lines = ["Ein Hund läuft.", "", "Zwei Männer."]
    for name, engine in engines.items():
        assert isinstance(engine, Engine), name
        facts = engine.describe()
        assert set(facts) == set(engines["pytorch"].describe()), name
        assert facts["engine"] == ("ctranslate2" if name == "ctranslate2" else "pytorch")
        assert facts["attention"] == (engine.attention_layers > 0), name
        assert facts["alignments"] is True, name  # (an export aligns words too)
        assert [len(h) for h in engine.translate(lines)] == [1, 1, 1], name
        with pytest.raises(AttributeError, match="not changed once built"):
            engine.cfg = engine.cfg  # per-call settings travel in a DecodeRequest
    assert not engines["ctranslate2"].capabilities.streaming
    assert engines["pytorch"].capabilities.streaming


@needs_ct2
def test_the_student_config_opens_in_every_engine(tmp_path):
    """configs/multi30k_student.yaml's shape (its layers and norms, at a test's width): the
    checkpoint, its int8 quantization, an ensemble and its CTranslate2 exports (float32,
    int8, int8 with a shortlist) all load it and translate; the float32 export greedily
    gives the checkpoint's own output."""
    import yaml

    shape = yaml.safe_load((ROOT / "configs" / "multi30k_student.yaml").read_text())["model"]
    keys = ("enc_layers", "dec_layers", "pre_norm", "tie_embeddings")
    ckpt = untrained(tmp_path, **{k: shape[k] for k in keys})
    engines = {
        "pytorch": load_engine(ckpt, "cpu"),
        "pytorch-int8": load_engine(ckpt, "cpu", "int8"),
        "ensemble": load_engine([ckpt, ckpt], "cpu", ensemble=True),
    }
    for scheme, vmap in [("float32", False), ("int8", False), ("int8", True)]:
        name = f"ct2-{scheme}" + ("-vmap" if vmap else "")
        folder = export_checkpoint(ckpt, "ctranslate2", scheme, tmp_path / name, vmap)[1]
        engines[name] = load_engine(folder, "cpu")
    assert engines["ct2-int8-vmap"].use_vmap
    sources = [s for s, _ in load_split(engines["pytorch"].cfg.data, "test", 1)]
    dc = engines["pytorch"].cfg.decode.replace(beam=1)
    outputs = {
        name: engine.translate(sources, DecodeRequest(dc)) for name, engine in engines.items()
    }
    for name, engine in engines.items():
        model = engine.cfg.model
        assert (model.enc_layers, model.dec_layers) == (shape["enc_layers"], shape["dec_layers"])
        assert len(outputs[name]) == len(sources), name
    assert agreement(outputs["pytorch"], outputs["ct2-float32"]) == 1.0
