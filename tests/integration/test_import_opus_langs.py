"""OPUS-MT's multilingual Marian models: tokens such as >>fra<< before the source name the
target language. `--tgt-lang fra` puts that token there, as transformers' MarianTokenizer
does with ">>fra<< " typed before the text; the outputs are transformers' own."""

from __future__ import annotations

import json

import pytest
import torch
from commandline import run_cli
from pretrained import demo_pairs, marian_folder, one_line_error

from translator.engines.load import load_engine
from translator.models.checkpoint import Checkpoint
from translator.pretrained import import_pretrained
from translator.specials import EOS

transformers = pytest.importorskip("transformers")

STEPS = 12
LANGS = ("fra", "por")


@pytest.fixture(scope="module")
def imported(tmp_path_factory):
    """(folder, checkpoint, transformers' model): a Marian model whose vocabulary holds
    >>fra<< and >>por<< (two pieces renamed: the sizes stay the weights')."""
    root = tmp_path_factory.mktemp("opus-langs")
    folder = marian_folder(root / "hf", eos_bias=2.0)
    vocab = json.loads((folder / "vocab.json").read_text())
    pieces = [p for p in vocab if p.startswith("▁") and len(p) > 3][:2]
    for piece, lang in zip(pieces, LANGS):
        vocab[f">>{lang}<<"] = vocab.pop(piece)
    (folder / "vocab.json").write_text(json.dumps(vocab))
    out = root / "imported.pt"
    import_pretrained(str(folder), out)
    return folder, out, transformers.MarianMTModel.from_pretrained(folder).eval()


def test_the_tokens_are_the_models_languages(imported):
    folder, path, _ = imported
    ckpt = Checkpoint.load(path)
    source = ckpt.source
    assert ckpt.config["decode"]["len_norm"] == "power"  # (as transformers ranks hypotheses)
    vocab = json.loads((folder / "vocab.json").read_text())
    table = source["ids"]["src"]
    assert source["languages_at"] == "source"
    assert {lang: table[i] for lang, i in source["languages"].items()} == {
        lang: vocab[f">>{lang}<<"] for lang in LANGS
    }


def test_tgt_lang_gives_transformers_outputs_for_the_token(imported):
    folder, path, hf = imported
    lines = [s for s, _ in demo_pairs()["test"][:30]]
    ckpt = Checkpoint.load(path)
    table = torch.tensor(ckpt.source["ids"]["src"])
    back = {int(m): i for i, m in reversed(list(enumerate(table.tolist())))}
    unk = json.loads((folder / "vocab.json").read_text())["<unk>"]
    marian = transformers.MarianTokenizer.from_pretrained(folder)
    outputs = {}
    from translator.errors import UserError

    with pytest.raises(UserError, match="--src-lang: this model's sources carry no language"):
        load_engine(path, device="cpu", src_lang="deu", tgt_lang=LANGS[0])
    for lang in LANGS:
        engine = load_engine(path, device="cpu", tgt_lang=lang)
        assert engine.source_prefix == (ckpt.source["languages"][lang],)
        dc = engine.cfg.decode.replace(beam=1, max_len_a=0.0, max_len_b=STEPS)
        ours = [h[0].tokens for h in engine.translate(lines, engine.request(decode=dc))]
        batch = marian([f">>{lang}<< {line}" for line in lines], return_tensors="pt", padding=True)
        with torch.no_grad():
            out = hf.generate(
                **batch,
                num_beams=1,
                max_new_tokens=STEPS + 1,
                bad_words_ids=[[hf.config.pad_token_id], [unk]],
                forced_eos_token_id=hf.config.eos_token_id,
            )
        theirs = []
        for row in out[:, 1:].tolist():
            ids = [back[m] for m in row if m != hf.config.pad_token_id]
            theirs.append(ids[: ids.index(EOS)] if EOS in ids else ids)
        assert [list(map(int, t)) for t in ours] == theirs
        outputs[lang] = theirs
    assert outputs["fra"] != outputs["por"]  # the token steers the model


def test_a_language_is_required_and_checked(imported, tmp_path, capsys):
    _, path, _ = imported
    for args, needles in (
        ((), ("several languages", "--tgt-lang", "fra", "por")),
        (("--tgt-lang", "deu"), ("--tgt-lang deu", "fra, por")),
    ):
        code, _, err = run_cli(capsys, "translate", "--checkpoint", str(path), *args, "Hallo")
        one_line_error(code, err, *needles)


def test_the_server_takes_each_requests_language(imported):
    """serve starts without --tgt-lang (the model has no language of its own) and puts each
    request's token before its source; a request that names none is a 400 listing them."""
    pytest.importorskip("fastapi")
    from serving import app_client

    _, path, _ = imported
    engine = load_engine(path, device="cpu", any_language=True)
    assert engine.source_prefix == ()
    dc = engine.cfg.decode.replace(beam=1, max_len_a=0.0, max_len_b=STEPS)
    texts = [s for s, _ in demo_pairs()["test"][:3]]
    with app_client(engine, path, dc) as client:
        answers = {
            lang: client.post("/translate", json={"texts": texts, "tgt_lang": lang})
            for lang in LANGS
        }
        refused = client.post("/translate", json={"texts": texts[:1]})
    for lang, answer in answers.items():
        assert answer.status_code == 200, answer.text
        one = load_engine(path, device="cpu", tgt_lang=lang)
        want = [h[0].text for h in one.translate(texts, one.request(decode=dc))]
        assert answer.json()["translations"] == want
    assert refused.status_code == 400 and "fra" in refused.text
