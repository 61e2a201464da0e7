"""Beam search of an imported MarianMT model against transformers' own `generate(num_beams=5)`
on 100 sentences. The two searches rank finished hypotheses alike when translator's
decode.len_norm is power (log-probability / len ** alpha, len counting the </s> and not the
start token, as transformers' length_penalty does) and transformers stops a sentence once it
has `beam` finished hypotheses (early_stopping=True), as translator's search does; an output
that reaches the length limit ends with its </s> scored as translator's search scores it
(EndAtLimit, in place of the forced_eos_token_id of Marian's generation config). The same
tokens are banned on both sides as in the greedy test (test_import_marian.generate)."""

import json

import pytest
import torch
from pretrained import EndAtLimit, demo_pairs, marian_folder
from util import guided_translate

from translator.engines.load import load_engine
from translator.models.checkpoint import Checkpoint
from translator.pretrained import import_pretrained
from translator.specials import EOS, PAD

transformers = pytest.importorskip("transformers")

BEAM = 5
STEPS = 20  # output tokens at most, </s> not counted
EARLY = True  # transformers stops a sentence at `beam` finished hypotheses, as translator


@pytest.fixture(scope="module")
def imported(tmp_path_factory):
    """(folder, checkpoint, transformers' model) of the shared-vocabulary model."""
    root = tmp_path_factory.mktemp("beam")
    folder = marian_folder(root / "hf")
    import_pretrained(str(folder), root / "imported.pt")
    hf = transformers.MarianMTModel.from_pretrained(folder).eval()
    hf.generation_config.forced_eos_token_id = None  # (EndAtLimit instead)
    return folder, root / "imported.pt", hf


def beam_generate(hf, folder, ckpt, lines, alpha: float):
    """transformers' beam-5 best outputs as translator ids, </s> dropped."""
    ids = ckpt.source["ids"]
    src_table, tgt_table = torch.tensor(ids["src"]), torch.tensor(ids["tgt"] or ids["src"])
    rows = ckpt.build_tokenizer("x").encode_src(lines)
    src = torch.full((len(rows), max(map(len, rows))), PAD)
    for i, row in enumerate(rows):
        src[i, : len(row)] = torch.tensor(row)
    unk = json.loads((folder / "vocab.json").read_text())["<unk>"]
    config = hf.config
    with torch.no_grad():
        out = hf.generate(
            input_ids=src_table[src],
            attention_mask=(src != PAD).long(),
            num_beams=BEAM,
            do_sample=False,
            length_penalty=alpha,
            early_stopping=EARLY,
            max_new_tokens=STEPS + 1,
            bad_words_ids=[[config.pad_token_id], [unk]],
            logits_processor=transformers.LogitsProcessorList(
                [EndAtLimit(config.eos_token_id, STEPS + 1)]
            ),
            decoder_start_token_id=config.decoder_start_token_id,
        )
    back = {int(m): i for i, m in reversed(list(enumerate(tgt_table.tolist())))}
    found = []
    for row in out[:, 1:].tolist():
        got = [back[m] for m in row]
        found.append(got[: got.index(EOS)] if EOS in got else got)
    return found


@pytest.mark.parametrize("alpha", [1.0, 0.6, 0.0])
def test_beam_outputs_match_generate_with_the_power_length_norm(imported, alpha):
    folder, path, hf = imported
    lines = [s for s, _ in demo_pairs()["test"]]
    engine = load_engine(path, device="cpu")
    settings = {"beam": BEAM, "len_penalty": alpha, "len_norm": "power"}
    decode = engine.cfg.decode.model_copy(update={**settings, "max_len_a": 0.0, "max_len_b": STEPS})
    ours = [
        [int(t) for t in hyps[0].tokens] for hyps in guided_translate(engine, lines, decode=decode)
    ]
    theirs = beam_generate(hf, folder, Checkpoint.load(path), lines, alpha)
    same = sum(a == b for a, b in zip(ours, theirs))
    assert same == len(lines), f"{same} of {len(lines)} identical"
    assert len({len(t) for t in theirs}) >= 3  # outputs of varied length, not one constant
    if alpha:  # the normalisation decides: GNMT's ranks some sentence's hypotheses otherwise
        gnmt = decode.model_copy(update={"len_norm": "gnmt"})
        other = [hyps[0].tokens for hyps in guided_translate(engine, lines, decode=gnmt)]
        assert [list(map(int, t)) for t in other] != theirs
