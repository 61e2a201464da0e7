"""Guided alignment (train.guided_alignment): a Transformer head trained on eflomal's word
alignments attends to the aligned source pieces more than the same head trained without;
resume stays exact; decoding and the CTranslate2 export read that head alone; other
families and settings it cannot take are one-line errors naming the key."""

import json

import numpy as np
import pytest
import torch
import yaml
from checkpoints import needs_ct2
from util import tiny_config

from translator.config import config_from_dict
from translator.data import align
from translator.data.align import aligned_ids
from translator.data.prepare import prepare
from translator.errors import UserError
from translator.models.checkpoint import Checkpoint
from translator.specials import BOS
from translator.train.trainer import Trainer

MODEL = {"dec_layers": 2, "heads": 2, "alignment_head": 1}  # layer -2: the first of two


def config(run_dir, guided: float, steps: int = 80, **model):
    train = {"max_steps": steps, "guided_alignment": guided, "log_every": 5}
    return config_from_dict(tiny_config(run_dir=str(run_dir), model={**MODEL, **model},
                                        train=train))  # fmt: skip


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    root = tmp_path_factory.mktemp("guided")
    for name, weight in (("guided", 1.0), ("plain", 0.0)):
        Trainer(config(root / name, weight)).run()
    return root


def mass_on_links(run_dir) -> float:
    """The mean attention weight the alignment head puts on a target piece's linked source
    pieces, over the first 40 training pairs (teacher-forced)."""
    saved = Checkpoint.load(run_dir / "last.pt")
    cfg, _, model = saved.build("test")
    batch = aligned_ids(prepare(cfg)).collate(np.arange(40))
    model.eval()
    with torch.no_grad():
        _, weights = model(batch.src, batch.tgt_in, alignment=True)
    linked = batch.align.any(-1)
    return float((weights * batch.align).sum(-1)[linked].mean())


def test_the_guided_head_attends_to_the_aligned_words(runs):
    guided, plain = mass_on_links(runs / "guided"), mass_on_links(runs / "plain")
    assert guided > 1.5 * plain, (guided, plain)
    summary = json.loads((runs / "guided" / "summary.json").read_text())
    losses = [loss for _, loss in summary["alignment_losses"]]
    assert len(losses) == 16
    assert np.mean(losses[-4:]) < np.mean(losses[:4]) - 0.2
    assert "alignment_losses" not in json.loads((runs / "plain" / "summary.json").read_text())


def test_decoding_reads_the_guided_head_alone(runs):
    cfg, tokenizer, model = Checkpoint.load(runs / "guided" / "last.pt").build("test")
    model.eval()
    assert model.alignment_layer == 0 and "head 1" in model.attention_label(0)
    src = torch.tensor(tokenizer.encode_src(["Die Mutter isst das Ei."]))
    tgt = tokenizer.encode_tgt(["The mother eats the egg."])[0]
    with torch.no_grad():
        _, forced = model(src, torch.tensor([tgt[:-1]]), alignment=True)
        state = model.init_state(model.encode(src))
        rows = []
        for token in tgt[:-1]:
            _, state, seen = model.step_attention(torch.tensor([token]), state, 0)
            rows.append(seen[0])
        model.decoder[0].cross_attn.align_head = None  # the mean of the heads instead
        _, mean = model(src, torch.tensor([tgt[:-1]]), alignment=True)
    assert torch.allclose(torch.stack(rows), forced[0], atol=1e-5)
    assert not torch.allclose(mean, forced, atol=1e-2)


def test_resume_with_guidance_continues_exactly(tmp_path):
    straight = Trainer(config(tmp_path / "straight", 0.5, steps=12))
    straight.run()
    Trainer(config(tmp_path / "halves", 0.5, steps=6)).run()
    resumed = Trainer(config(tmp_path / "halves", 0.5, steps=12), resume=True)
    resumed.run()
    assert resumed.state.step == 12 and straight.state.epoch >= 1
    a, b = straight.model.state_dict(), resumed.model.state_dict()
    for name in a:
        assert torch.equal(a[name], b[name]), name


@pytest.mark.parametrize(
    "model, train, words",
    [
        ({"type": "lstm", "hidden_size": 16}, {}, "only model.type transformer"),
        ({"alignment_head": None}, {}, "model.alignment_head"),
        ({}, {"sampling_alpha": 0.2}, "tokenizer.sampling_alpha"),
    ],
)
def test_settings_guidance_cannot_take_are_refused(tmp_path, model, train, words):
    raw = tiny_config(run_dir=str(tmp_path / "run"), model={**MODEL, **model},
                      train={"guided_alignment": 0.1})  # fmt: skip
    if train:
        raw["tokenizer"] = {**raw["tokenizer"], **train}
    with pytest.raises(UserError) as err:
        Trainer(config_from_dict(raw)).run()
    assert "train.guided_alignment" in str(err.value) and words in str(err.value)
    assert "\n" not in str(err.value)


def test_a_head_outside_the_layer_is_refused(tmp_path):
    with pytest.raises(UserError, match="model.alignment_head"):
        config(tmp_path, 0.1, alignment_head=2)
    with pytest.raises(UserError, match="model.alignment_layer"):
        config(tmp_path, 0.1, alignment_layer=2)


@needs_ct2
def test_the_ctranslate2_export_aligns_by_the_guided_head(runs, tmp_path):
    import ctranslate2

    from translator.engines.export import export_checkpoint

    ckpt = runs / "guided" / "last.pt"
    _, folder = export_checkpoint(ckpt, "ctranslate2", "float32", tmp_path / "ct2")
    cfg, tokenizer, model = Checkpoint.load(ckpt).build("test")
    model.eval()
    src = tokenizer.encode_src(["Die Mutter isst das Ei."])[0]
    tgt = tokenizer.encode_tgt(["The mother eats the egg."])[0]
    pieces = [tokenizer.src.id_to_piece(i) for i in src]
    prefix = [tokenizer.tgt.id_to_piece(i) for i in tgt[1:-1]]
    out = ctranslate2.Translator(str(folder)).translate_batch(
        [pieces], target_prefix=[prefix], beam_size=1, return_attention=True,
        max_decoding_length=len(prefix) + 1,
    )  # fmt: skip
    theirs = torch.tensor(out[0].attention[0])[: len(prefix)]
    with torch.no_grad():
        _, ours = model(torch.tensor([src]), torch.tensor([[BOS, *tgt[1:-1]]]), alignment=True)
    assert torch.allclose(theirs, ours[0, : len(prefix)], atol=1e-4)


def test_prepare_aligns_once_and_training_reuses_it(tmp_path, here, monkeypatch):
    raw = tiny_config(run_dir=str(tmp_path / "run"), model=MODEL,
                      data={"prepared_dir": str(tmp_path / "prep")},
                      train={"guided_alignment": 0.1, "max_steps": 2})  # fmt: skip
    path = tmp_path / "guided.yaml"
    path.write_text(yaml.safe_dump(raw))
    result = here("prepare", "--config", str(path))
    assert result.returncode == 0, result.stderr
    assert "word alignment links" in result.stdout
    assert (tmp_path / "prep" / "align.json").is_file()

    def no_aligner(*args):
        raise AssertionError("eflomal ran again")

    monkeypatch.setattr(align, "align_word_lines", no_aligner)
    trainer = Trainer(config_from_dict(raw))
    trainer.run()
    assert trainer.state.step == 2
