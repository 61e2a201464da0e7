"""Beam search of imported NLLB and M2M100 models against transformers' own
`generate(num_beams=5)`: the forced target language code is scored 0 on both sides
(transformers' forced_bos_token_id leaves it a log-probability of 0; translator leaves the
forced start out of the ranking, decode/rules.py `unforced`) and counted in the length, with
decode.len_norm power, early stopping at `beam` finished hypotheses and an output at the
length limit ending with its </s> scored as translator scores it (as
test_import_marian_beam.py)."""

import pytest
import torch
from imported_m2m100 import KINDS, STEPS, import_kind, sources, table
from pretrained import EndAtLimit, demo_pairs
from util import guided_translate

from translator.engines.load import load_engine
from translator.models.checkpoint import Checkpoint
from translator.specials import EOS, PAD

transformers = pytest.importorskip("transformers")


@pytest.fixture(scope="module", params=list(KINDS))
def imported(request, tmp_path_factory):
    return import_kind(request.param, tmp_path_factory)


BEAM = 5


def beam_generate(imported, engine, lines, tgt_lang, alpha):
    ids = table(imported.path)
    src = sources(engine, lines)
    code = Checkpoint.load(imported.path).source["languages"][tgt_lang]
    config = imported.hf.config
    end = EndAtLimit(config.eos_token_id, STEPS + 2)  # the start, the code, STEPS tokens
    with torch.no_grad():
        out = imported.hf.generate(
            input_ids=ids[src],
            attention_mask=(src != PAD).long(),
            num_beams=BEAM,
            do_sample=False,
            length_penalty=alpha,
            early_stopping=True,
            max_new_tokens=STEPS + 2,
            forced_bos_token_id=int(ids[code]),
            suppress_tokens=[config.pad_token_id, int(ids[1])],
            logits_processor=transformers.LogitsProcessorList([end]),
            decoder_start_token_id=config.decoder_start_token_id,
        )
    back = {int(m): i for i, m in enumerate(ids.tolist())}
    found = []
    for row in out[:, 2:].tolist():
        row = [back[m] for m in row if m != config.pad_token_id]
        found.append(row[: row.index(EOS)] if EOS in row else row)
    return found


@pytest.mark.parametrize("alpha", [1.0, 0.0])
def test_beam_outputs_match_generate_with_the_forced_code_scored_zero(imported, alpha):
    lines = [s for s, _ in demo_pairs()["test"]]
    tgt_lang = imported.targets[0]
    engine = load_engine(imported.path, "cpu", src_lang=imported.src, tgt_lang=tgt_lang)
    settings = {"beam": BEAM, "len_penalty": alpha, "len_norm": "power"}
    decode = engine.cfg.decode.model_copy(update={**settings, "max_len_a": 0.0, "max_len_b": STEPS})
    ours = [[int(t) for t in h[0].tokens] for h in guided_translate(engine, lines, decode=decode)]
    theirs = beam_generate(imported, engine, lines, tgt_lang, alpha)
    same = sum(a == b for a, b in zip(ours, theirs))
    assert same == len(lines), f"{same} of {len(lines)} identical"
    if alpha:  # (without a length penalty the tiny random models end at once)
        assert len({len(t) for t in theirs}) >= 3
