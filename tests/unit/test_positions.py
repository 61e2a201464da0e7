"""The sinusoid tables of models/positions.py, above all M2M100's (fairseq's) layout: its
frequencies, its offset of 2, and why that offset is all that padding-aware positions come
to for translator's right-padded batches."""

import math

import pytest
import torch

from translator.config import config_from_dict
from translator.data.batching import pad_ids
from translator.errors import UserError
from translator.models.family import model_config
from translator.models.positions import sinusoids
from translator.models.transformer import Transformer

FAIRSEQ_PAD = 1  # fairseq's <pad> id: positions start at FAIRSEQ_PAD + 1


def fairseq_row(angle: int, dim: int) -> list[float]:
    """fairseq's table row of `angle`, from its formula, in float64."""
    half = dim // 2
    freqs = [math.exp(-i * math.log(10000) / (half - 1)) for i in range(half)]
    row = [math.sin(angle * f) for f in freqs] + [math.cos(angle * f) for f in freqs]
    return row + [0.0] * (dim % 2)


def fairseq_positions(ids: torch.Tensor) -> torch.Tensor:
    """fairseq's padding-aware position numbers (utils.make_positions): real tokens count
    from FAIRSEQ_PAD + 1, padding keeps FAIRSEQ_PAD."""
    real = (ids != FAIRSEQ_PAD).long()
    return torch.cumsum(real, 1) * real + FAIRSEQ_PAD


@pytest.mark.parametrize("dim", [32, 33, 8])
def test_m2m100_rows_are_fairseqs_from_angle_two(dim):
    table = sinusoids(50, dim, "m2m100")
    assert table.shape == (50, dim) and table.dtype == torch.float32
    want = torch.tensor([fairseq_row(p + 2, dim) for p in range(50)], dtype=torch.float64)
    assert (table.double() - want).abs().max() < 1e-4  # (float32 angles, as fairseq's)
    if dim % 2:
        assert (table[:, -1] == 0).all()
        return
    # not the other layouts' tables
    for other in ("interleaved", "halves"):
        assert (sinusoids(50, dim, other) - table).abs().max() > 0.1


def test_m2m100_table_is_transformers_to_the_bit():
    m2m = pytest.importorskip("transformers.models.m2m_100.modeling_m2m_100")
    theirs = m2m.M2M100SinusoidalPositionalEmbedding.get_embedding(130, 32, FAIRSEQ_PAD)
    assert torch.equal(sinusoids(128, 32, "m2m100"), theirs[2:])


def test_padding_aware_positions_are_an_offset_of_two_on_right_padded_batches():
    """fairseq numbers each row's tokens from 2 whatever the padding; translator pads on the
    right, so its token at column p is fairseq's position p + 2 in every row."""
    rows = [[5, 6, 7, 8, 9], [5, 6], [5, 6, 7]]
    ours = pad_ids(rows)  # translator's <pad> is 0; the model's own ids are tested here
    assert (ours[1, 2:] == 0).all()  # padding on the right
    theirs = torch.where(ours == 0, FAIRSEQ_PAD, ours + 10)  # the same rows in fairseq ids
    positions = fairseq_positions(theirs)
    real = ours != 0
    columns = torch.arange(ours.size(1)).expand_as(ours)
    assert torch.equal(positions[real], (columns + 2)[real])
    # (a left-padded row would not be: its first token stands at column 3)
    left = torch.tensor([[FAIRSEQ_PAD, FAIRSEQ_PAD, FAIRSEQ_PAD, 15, 16]])
    assert fairseq_positions(left)[0, 3] == 2


def test_a_model_trained_from_nothing_takes_the_m2m100_layout():
    torch.manual_seed(0)
    cfg = model_config(
        d_model=32, heads=4, enc_layers=1, dec_layers=1, ff_dim=64, dropout=0.0,
        positions="m2m100",
    )  # fmt: skip
    model = Transformer(cfg, 40, 40, share_src_tgt=True).eval()
    assert torch.equal(model.pe, sinusoids(cfg.max_positions, 32, "m2m100"))
    src = torch.randint(4, 40, (2, 6))
    tgt = torch.randint(4, 40, (2, 5))
    tgt[:, 0] = 2
    full = model(src, tgt)
    state = model.init_state(model.encode(src))
    with torch.no_grad():  # the cached steps read the table at the same rows as the full pass
        for t in range(tgt.size(1)):
            logits, state = model.step(tgt[:, t], state)
            assert torch.allclose(logits, full[:, t], atol=1e-5)


def test_an_unknown_layout_is_refused_naming_the_key():
    with pytest.raises(UserError, match="positions"):
        config_from_dict({"model": {"type": "transformer", "positions": "fairseq"}})
