"""What the search tests decode with: small models of every family (the recurrent variants,
ensembles), batches of sources with target prefixes, the searches an ensemble must match,
and draws from a sampler."""

import torch
from util import favour_eos, tiny_model

from translator.config import DecodeConfig
from translator.decode.search import beam_search, greedy_search
from translator.specials import PAD

# -- the recurrent variants ------------------------------------------------------------------------

RNN_VOCAB = 30
RNN_VARIANTS = {
    "lstm": dict(type="lstm"),
    "lstm-gru-bridge": dict(type="lstm", rnn_type="gru", enc_layers=3),
    "lstm-forward-source": dict(type="lstm", reverse_source=False, enc_layers=1),
    "bahdanau-gru": dict(type="bahdanau", rnn_type="gru"),
    "bahdanau-lstm": dict(type="bahdanau", rnn_type="lstm"),
    "luong-dot-feed": dict(type="luong", attention_score="dot"),
    "luong-dot": dict(type="luong", attention_score="dot", input_feeding=False),
    "luong-general-feed": dict(type="luong", attention_score="general"),
    "luong-general": dict(type="luong", attention_score="general", input_feeding=False),
    "luong-concat-feed": dict(type="luong", attention_score="concat"),
    "luong-concat": dict(type="luong", attention_score="concat", input_feeding=False),
    "luong-gru-unidirectional": dict(
        type="luong", rnn_type="gru", bidirectional=False, attention_score="dot"
    ),
}
RNN_ATTENTION = [k for k, v in RNN_VARIANTS.items() if v["type"] != "lstm"]

# -- target prefixes -------------------------------------------------------------------------------

FAMILIES = ["transformer", "lstm", "bahdanau", "luong", "transformer+luong"]


def family_model(family: str):
    """A small model of `family` in eval mode, <eos> favoured; "a+b" is an ensemble."""
    from translator.models.ensemble import Ensemble

    torch.manual_seed(7)
    members = [tiny_model(name) for name in family.split("+")]
    favour_eos(members[0], 0.3)
    model = members[0] if len(members) == 1 else Ensemble(members)
    return model.eval()


def prefixed_batch(n: int = 6, seed: int = 3):
    """Sources [n, 9] of different lengths, and a prefix for each (some empty)."""
    g = torch.Generator().manual_seed(seed)
    src = torch.randint(4, 30, (n, 9), generator=g)
    for row, length in enumerate([9, 3, 6, 1, 8, 5][:n]):
        src[row, length:] = PAD
    prefixes = [torch.randint(4, 30, (k,), generator=g).tolist() for k in [2, 0, 3, 1, 4, 2][:n]]
    return src, prefixes


# -- ensembles and sampling --------------------------------------------------------------------------

SEARCHES = {
    "greedy": lambda m, src: greedy_search(m, src, DecodeConfig(max_len_a=1.0, max_len_b=4)),
    "beam": lambda m, src: beam_search(
        m, src, DecodeConfig(beam=4, max_len_a=1.0, max_len_b=4, len_penalty=0.6), nbest=3
    ),
}

SAMPLING_DC = DecodeConfig(max_len_a=1.0, max_len_b=5, len_penalty=0.6)


def draws(sampler, probs, n=400):
    """n tokens the sampler chooses from the distribution `probs`, one row each."""
    logp = torch.tensor(probs).log().repeat(n, 1)
    return sampler.choose(logp).tolist()
