"""Released models with tie_word_embeddings false: transformers 5 then ties no table, so the
encoder, the decoder and the output read three tables of their own (for MarianMT even with
share_encoder_decoder_embeddings true), and `translator import` must compute with each."""

import pytest
import torch
from commandline import run_cli
from imported_m2m100 import their_log_probs
from pretrained import demo_pairs, marian_folder
from pretrained_m2m100 import nllb_folder

from translator.engines.load import load_engine
from translator.models.checkpoint import Checkpoint
from translator.specials import BOS, EOS, PAD

transformers = pytest.importorskip("transformers")

PAIRS = 20
BUILD = {"marian": marian_folder, "nllb": nllb_folder}


def padded(rows: list[list[int]]) -> torch.Tensor:
    out = torch.full((len(rows), max(map(len, rows))), PAD)
    for i, row in enumerate(rows):
        out[i, : len(row)] = torch.tensor(row)
    return out


@pytest.mark.parametrize("kind", list(BUILD))
def test_untied_tables_give_transformers_log_probs(kind, tmp_path, capsys):
    folder = BUILD[kind](tmp_path / "hf", tie=False)
    code, _, err = run_cli(capsys, "import", str(folder), "--output", str(tmp_path / "m.pt"))
    assert code == 0, err
    hf = transformers.AutoModelForSeq2SeqLM.from_pretrained(folder).eval()
    engine = load_engine(tmp_path / "m.pt", device="cpu")
    ids = Checkpoint.load(tmp_path / "m.pt").source["ids"]
    src_table, tgt_table = torch.tensor(ids["src"]), torch.tensor(ids["tgt"] or ids["src"])
    pairs = demo_pairs()["test"][:PAIRS]
    tok = engine.tokenizer
    src = padded([[*engine.source_prefix, *s] for s in tok.encode_src([s for s, _ in pairs])])
    # <s> (the model's decoder start), a multilingual model's forced code, the pieces, </s>
    start = [BOS, *engine.target_start]
    tgt = padded([start + t[1:] for t in tok.encode_tgt([t for _, t in pairs])])
    with torch.no_grad():
        ours = torch.log_softmax(engine.model.eval()(src, tgt[:, :-1]).float(), -1)
        theirs = their_log_probs(hf, src, tgt, src_table, tgt_table)
    real = tgt[:, 1:] != PAD
    outputs = torch.arange(ours.size(-1)) != BOS  # (<s> repeats the start row)
    diff = (ours - theirs)[real][:, outputs].abs().max().item()
    assert diff < 1e-4, diff
    assert (tgt == EOS).sum() == PAIRS  # each target read to its end
