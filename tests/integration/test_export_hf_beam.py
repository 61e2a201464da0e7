"""`translator export --format huggingface` carries the checkpoint's beam settings: with the
folder's generation_config.json alone, transformers' beam search gives what translator's
gives (the beam, the length penalty, and a sentence ended at `beam` finished hypotheses)."""

import json

import pytest
import torch
from commandline import run_cli
from pretrained import EndAtLimit, demo_pairs, marian_folder
from util import guided_translate

from translator.engines.load import load_engine
from translator.models.checkpoint import Checkpoint
from translator.specials import EOS

transformers = pytest.importorskip("transformers")

STEPS = 20  # output tokens at most, </s> not counted
LINES = 12


def test_generate_with_the_folders_settings_gives_translators_beam_outputs(tmp_path, capsys):
    folder = marian_folder(tmp_path / "hf")
    pad = json.loads((folder / "config.json").read_text())["pad_token_id"]
    release = {"num_beams": 4, "length_penalty": 0.6, "decoder_start_token_id": pad}
    (folder / "generation_config.json").write_text(json.dumps(release))
    code, _, err = run_cli(capsys, "import", str(folder), "--output", str(tmp_path / "m.pt"))
    assert code == 0, err
    args = ["export", "--checkpoint", str(tmp_path / "m.pt"), "--format", "huggingface"]
    code, _, err = run_cli(capsys, *args, "--output", str(tmp_path / "out"))
    assert code == 0, err

    lines = [s for s, _ in demo_pairs()["test"]][:LINES]
    engine = load_engine(tmp_path / "m.pt", device="cpu")
    assert (engine.cfg.decode.beam, engine.cfg.decode.len_penalty) == (4, 0.6)
    decode = engine.cfg.decode.model_copy(update={"max_len_a": 0.0, "max_len_b": STEPS})
    want = [[int(t) for t in h[0].tokens] for h in guided_translate(engine, lines, decode=decode)]

    tok = transformers.AutoTokenizer.from_pretrained(tmp_path / "out")
    model = transformers.AutoModelForSeq2SeqLM.from_pretrained(tmp_path / "out").eval()
    eos = model.config.eos_token_id
    with torch.no_grad():  # the limit as translator's (the rest: generation_config.json)
        out = model.generate(
            **tok(lines, padding=True, return_tensors="pt"),
            max_new_tokens=STEPS + 1,
            forced_eos_token_id=None,
            logits_processor=transformers.LogitsProcessorList([EndAtLimit(eos, STEPS + 1)]),
        )
    ids = Checkpoint.load(tmp_path / "m.pt").source["ids"]["src"]  # ours -> the export's
    back = {m: i for i, m in reversed(list(enumerate(ids)))}
    got = [[back[m] for m in row[1:]] for row in out.tolist()]
    assert [row[: row.index(EOS)] if EOS in row else row for row in got] == want
    assert len({len(t) for t in want}) >= 3  # outputs of varied length, not one constant
