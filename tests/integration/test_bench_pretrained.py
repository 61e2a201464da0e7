"""scripts/bench/bench_pretrained.py at a tiny size: its three decoders give outputs of the
fixed length, and with a float32 export all three agree on every sentence (so the speed
figures compare the same search), and its JSON line says what the full run reports."""

import importlib.util
import json

import pytest
import torch
from util import ROOT

pytest.importorskip("transformers")
pytest.importorskip("ctranslate2")

SCRIPT = ROOT / "scripts" / "bench" / "bench_pretrained.py"
DATA = ROOT.parent / "shared" / "data" / "multi30k"  # its training text and test source


def test_the_speed_script_times_three_decoders_that_agree(tmp_path):
    names = ("train.de.gz", "train.en.gz", "test_2016_flickr.de.gz")
    if not all((DATA / name).is_file() for name in names):
        pytest.skip("the Multi30k files are not in ../shared/data/multi30k")
    spec = importlib.util.spec_from_file_location("bench_pretrained", SCRIPT)
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    out = tmp_path / "speed.jsonl"
    tiny = ["--sentences", "12", "--layers", "1", "--d-model", "32", "--heads", "2"]
    tiny += ["--ffn", "64", "--vocab", "3000", "--spm-size", "400", "--length", "6"]
    tiny += ["--batch-size", "5", "--quantization", "float32", "--work", str(tmp_path / "w")]
    threads = torch.get_num_threads()
    try:
        row = bench.main([*tiny, "--output", str(out)])
    finally:
        torch.set_num_threads(threads)  # (the script runs on 2)
    assert json.loads(out.read_text().splitlines()[-1]) == row
    engines = ("transformers", "translator_pytorch", "translator_ct2_float32")
    assert row["output_lengths"] == {name: [6] for name in engines}
    assert row["identical_to_transformers"] == {name: 1.0 for name in engines[1:]}
    assert all(row["target_tokens_per_s"][name] > 0 for name in engines)
    assert row["sentences"] == 12 and row["model"]["parameters"] > 3000 * 32
    assert isinstance(row["machine"]["avx512"], bool) and row["machine"]["cpu"]
    from translator.decode import loop
    from translator.decode.rules import mask_specials

    assert loop.mask_specials is mask_specials  # the script's hold on </s> is undone
