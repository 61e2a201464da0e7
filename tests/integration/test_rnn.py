"""The recurrent families (lstm, bahdanau, luong) against the shared model interface."""

import pytest
import torch

from translator.config import TokenizerConfig
from translator.data.batching import pad_ids
from translator.data.demo import generate_pairs
from translator.data.tokenizer import PAD, Tokenizer
from translator.decode.search import greedy_search
from translator.models.family import build_model, model_config

# --- learning: each family memorises 32 demo pairs --------------------------------------------


@pytest.fixture(scope="module")
def demo_data(tmp_path_factory):
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("TRANSLATOR_CACHE", str(tmp_path_factory.mktemp("cache")))
        # sources of up to 70 characters: a step of additive attention costs target length
        # times source length, and the longest demo sentences tripled the test's time
        pairs = [p for p in generate_pairs(96, 5) if len(p[0]) <= 70][:32]
        assert len(pairs) == 32
        tokenizer = Tokenizer.train(pairs, TokenizerConfig(vocab_size=400), 5)
    src = tokenizer.encode_src([s for s, _ in pairs])
    tgt = tokenizer.encode_tgt([t for _, t in pairs])
    order = sorted(range(32), key=lambda i: max(len(src[i]), len(tgt[i])))
    batches = []
    for half in (order[:16], order[16:]):  # two length-sorted batches: less padding
        batches.append(
            (
                [pairs[i][1] for i in half],
                pad_ids([src[i] for i in half]),
                pad_ids([tgt[i] for i in half]),
            )
        )
    return tokenizer, batches


@pytest.mark.parametrize(
    "kw",
    [
        dict(type="lstm"),
        dict(type="bahdanau", rnn_type="gru"),
        dict(type="luong", attention_score="general"),
    ],
    ids=["lstm", "bahdanau", "luong"],
)
def test_each_family_memorises_32_demo_pairs(kw, demo_data):
    tokenizer, batches = demo_data
    torch.manual_seed(0)
    cfg = model_config(embed_dim=64, hidden_size=128, enc_layers=1, dec_layers=1, dropout=0.0, **kw)
    model = build_model(cfg, tokenizer.src_vocab_size, tokenizer.tgt_vocab_size, True)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)

    def greedy() -> list[list[str]]:
        model.eval()
        out = [tokenizer.decode_tgt([h[0].tokens for h in greedy_search(model, src)])
               for _refs, src, _ in batches]  # fmt: skip
        model.train()
        return out

    for epoch in range(150):
        worst = 0.0
        for _refs, src, tgt in batches:
            logits = model(src, tgt[:, :-1])
            loss = torch.nn.functional.cross_entropy(
                logits.flatten(0, 1), tgt[:, 1:].flatten(), ignore_index=PAD
            )
            optimizer.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            worst = max(worst, loss.item())
        # once the loss is low, training stops as soon as greedy search gives every reference
        if worst < 0.05 and epoch % 3 == 0 and greedy() == [refs for refs, _, _ in batches]:
            break
    for (refs, _, _), hyps in zip(batches, greedy(), strict=True):
        assert hyps == refs
