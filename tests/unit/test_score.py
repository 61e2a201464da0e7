"""Forced decoding (decode/score.py, `Engine.score`): a pair's score is what a search adds up
for that output, for every family, an ensemble and the CTranslate2 engine."""

import math

import pytest
import torch
from checkpoints import needs_ct2, untrained
from util import favour_eos, tiny_model, user_error

from translator.config import DecodeConfig
from translator.decode.rules import length_penalty
from translator.decode.score import Score, score_in_batches, teacher_forced
from translator.decode.search import beam_search
from translator.engines.export import export_checkpoint
from translator.engines.load import load_engine
from translator.models.ensemble import Ensemble
from translator.models.family import names
from translator.specials import BOS, EOS

LINES = ["Ein Hund läuft.", "Zwei Männer spielen Fußball im Park.", "", "Eine Frau."]
TARGETS = ["A dog runs.", "Two men play football in a park.", "Nothing.", ""]


@pytest.mark.parametrize("family", [*names(), "ensemble"])
def test_a_hypothesis_scores_what_the_beam_search_gave_it(family):
    torch.manual_seed(3)
    if family == "ensemble":
        model = Ensemble([tiny_model("transformer"), tiny_model("luong")]).eval()
    else:
        model = tiny_model(family)
        favour_eos(model, 2.0)  # outputs of several lengths, not all cut at the limit
    src = torch.tensor([[5, 6, 7, 8, 9, EOS], [10, 11, EOS, 0, 0, 0], [12, 13, 14, 15, EOS, 0]])
    dc = DecodeConfig(beam=4, len_penalty=0.6, max_len_a=1.0, max_len_b=3)
    with torch.no_grad():
        found = beam_search(model, src, dc, nbest=4)
    rows, targets, expected = [], [], []
    for n, hyps in enumerate(found):
        for h in hyps:
            rows.append([int(t) for t in src[n] if t != 0])
            targets.append([BOS, *h.tokens, EOS])
            expected.append(h.score)
    assert len({len(t) for t in targets}) > 1  # lengths vary, so padding is exercised
    scores = teacher_forced(model, rows, targets, torch.device("cpu"), torch.float32)
    for score, target, want in zip(scores, targets, expected):
        assert score.tokens == len(target) - 1
        normalised = score.logprob / float(length_penalty(score.tokens, dc.len_penalty))
        assert normalised == pytest.approx(want, abs=1e-4)


def test_scores_come_back_in_input_order_whatever_the_batching():
    torch.manual_seed(0)
    model = tiny_model("transformer")

    class Pieces:  # a tokenizer of whitespace-separated ids
        def encode_src(self, lines):
            return [[int(w) for w in line.split()] + [EOS] for line in lines]

        def encode_tgt(self, lines):
            return [[BOS] + [int(w) for w in line.split()] + [EOS] for line in lines]

    sources = ["5 6 7", "8", "9 10 11 12 13", "", "14 15"]
    targets = ["20 21", "22 23 24 25", "", "26", "27 28 29"]

    def run(src, tgt):
        return teacher_forced(model, src, tgt, torch.device("cpu"), torch.float32)

    alone = [score_in_batches(Pieces(), [s], [t], (64, 64), 1, False, run)[0] for s, t in
             zip(sources, targets)]  # fmt: skip
    together = score_in_batches(Pieces(), sources, targets, (64, 64), 2, False, run)
    assert [s.tokens for s in together] == [3, 5, 1, 2, 4]
    for a, b in zip(alone, together):
        assert a.logprob == pytest.approx(b.logprob, abs=1e-4)
    # a target longer than the decoder's steps is cut to what the model reads
    cut = score_in_batches(Pieces(), ["5"], ["20 21 22 23 24 25"], (64, 4), 1, False, run)
    assert cut[0].tokens == 4
    message = user_error(score_in_batches, Pieces(), ["5", "6"], ["7"], (64, 64), 1, False, run)
    assert "2 lines" in message and "1" in message


def test_score_mean_is_per_token_and_plain_data():
    score = Score(-6.0, 3)
    assert score.mean == -2.0
    assert score.as_dict() == {"logprob": -6.0, "mean": -2.0, "tokens": 3}


@needs_ct2
def test_every_engine_scores_alike(tmp_path):
    ckpt = untrained(tmp_path)
    _, folder = export_checkpoint(ckpt, "ctranslate2", "float32", tmp_path / "out")
    pytorch = load_engine(ckpt, "cpu")
    want = pytorch.score(LINES, TARGETS)
    assert [s.tokens for s in want] == [len(t) - 1 for t in pytorch.tokenizer.encode_tgt(TARGETS)]
    for other in (load_engine([ckpt, ckpt], "cpu", ensemble=True), load_engine(folder, "cpu")):
        got = other.score(
            LINES, TARGETS, other.request(decode=other.cfg.decode.replace(batch_size=2))
        )
        assert [s.tokens for s in got] == [s.tokens for s in want]
        for a, b in zip(got, want):
            assert a.logprob == pytest.approx(b.logprob, abs=1e-4)


def test_dual_conditional_score_punishes_disagreement_and_doubt():
    from translator.commands.filter import kept, pair_score

    assert pair_score(-1.0, None) == pytest.approx(math.exp(-1.0))
    agree = pair_score(-1.0, -1.0)
    assert agree == pytest.approx(math.exp(-1.0))
    assert pair_score(-0.5, -1.5) < agree  # same mean cross-entropy, but the models disagree
    assert pair_score(-2.0, -2.0) < agree  # both unsure
    scores = [0.5, 0.9, 0.1, 0.9, 0.7]
    assert kept(scores, 0.4, None) == [False, True, False, True, False]
    assert kept(scores, 1.0, None) == [True] * 5 and kept(scores, 0.0, None) == [False] * 5
    assert kept(scores, None, 0.6) == [False, True, False, True, True]


def test_a_pair_cut_to_the_models_limit_is_named_by_its_side(tmp_path, caplog):
    engine = load_engine(untrained(tmp_path), "cpu")
    long = " ".join(["hund"] * 2000)
    with caplog.at_level("WARNING"):
        engine.score(["kurz", long], [long, "short"])
    said = [r.getMessage() for r in caplog.records if "cut to the model" in r.getMessage()]
    assert [m.split(":")[0] for m in said] == ["source line 2", "target line 1"]
    # the counts are the line's subwords (no </s> or <bos>), as the scored tokens are,
    # which are the subwords kept and </s>
    subwords = len(engine.tokenizer.encode_tgt([long])[0]) - 2
    limit = int(said[1].rsplit(" ", 1)[-1])
    assert f"target line 1: {subwords} subwords, cut to" in said[1]
    assert engine.score(["kurz"], [long])[0].tokens == limit + 1
