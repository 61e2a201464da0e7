"""Several trained models decoding as one (`--ensemble`), on the shared interface.

At every step each member gives its log-probabilities (log-softmax of its logits) and the
ensemble takes their mean: the log of the geometric mean of the members' distributions, a
product of experts that ranks a token low when any member finds it unlikely. The mean is
renormalised (another log-softmax), so a step returns log-probabilities, which
`log_probs`, what the searches call, normalises once more as it does any model's logits:
an ensemble of one model, or of copies of it, decodes exactly as that model. (fairseq averages the probabilities instead, a mixture that
a single confident member can carry.)

The ensemble is a Seq2Seq whose state holds one state per member, so greedy search, beam
search and sampling run unchanged, and any families mix: they only have to share the
tokenizer, which `translator.engines.load.load_engine` checks.
"""

from __future__ import annotations

import torch
from torch import nn

from translator.models.base import Seq2Seq, State, log_softmax


class Ensemble(Seq2Seq):
    """The mean log-probability of its members. Attention (for --plot-attention) is the mean
    of the members that have attention; `step_attention(layer)` asks each of them for
    `layer`, so the ensemble offers the layers that all of them have (-1: each one's last).
    Sentences may join its running searches where they may join every member's."""

    def __init__(self, members: list[Seq2Seq]):
        super().__init__()
        self.members = nn.ModuleList(members)
        lengths = [m.max_output_len for m in members if m.max_output_len is not None]
        self.max_output_len = min(lengths) if lengths else None
        self.never_output = tuple(sorted({i for m in members for i in m.never_output}))
        self.seeing = [i for i, m in enumerate(members) if m.attention_layers]
        self.attention_layers = min((members[i].attention_layers for i in self.seeing), default=0)

    @property
    def supports_streaming(self) -> bool:
        return all(m.supports_streaming for m in self.members)

    def attention_label(self, layer: int) -> str:
        return f"mean of {len(self.seeing)} of {len(self.members)} models with attention"

    @property
    def alignment_layer(self) -> int | None:
        """Each member with attention aligns from its own alignment layer where those are
        the same counted from the last (-1: each one's last), which step_attention then asks
        them all for; members that align from different depths give None: no alignments."""
        found = {
            self.members[i].alignment_layer - self.members[i].attention_layers for i in self.seeing
        }
        return found.pop() if len(found) == 1 else None

    def encode(self, src: torch.Tensor) -> State:
        return {"members": [m.encode(src) for m in self.members]}

    def init_state(self, memory: State) -> State:
        return {"members": [m.init_state(x) for m, x in zip(self.members, memory["members"])]}

    def step(self, prev_tokens, state):
        """The renormalised mean log-probability [N, V] as the logits (which log_probs
        normalises once more, leaving them as they are)."""
        logp, state, _ = self._step(prev_tokens, state, None)
        return logp, state

    def step_attention(self, prev_tokens, state, layer):
        return self._step(prev_tokens, state, self.check_layer(layer))

    def _step(self, prev_tokens, state, layer: int | None):
        logps, states, seen = [], [], []
        for i, (member, own) in enumerate(zip(self.members, state["members"])):
            if layer is not None and i in self.seeing:
                logits, own, weights = member.step_attention(prev_tokens, own, layer)
                logp = log_softmax(logits)
                seen.append(weights)
            else:
                logp, own = member.log_probs(prev_tokens, own)
            logps.append(logp)
            states.append(own)
        weights = torch.stack(seen).mean(0) if seen else None
        return torch.log_softmax(torch.stack(logps).mean(0), dim=-1), {"members": states}, weights

    def reorder_state(self, state, indices, same_sentences: bool = False):
        return {
            "members": [
                m.reorder_state(s, indices, same_sentences)
                for m, s in zip(self.members, state["members"])
            ]
        }

    def merge_states(self, states):
        parts = zip(*(s["members"] for s in states))
        return {"members": [m.merge_states(list(p)) for m, p in zip(self.members, parts)]}

    def place_states(self, state, rows, new):
        parts = zip(self.members, state["members"], new["members"])
        return {"members": [m.place_states(s, rows, n) for m, s, n in parts]}

    def forward(self, src, tgt_in):
        """Teacher-forced log-probabilities [B, T, V], as the steps give them."""
        logps = [log_softmax(m(src, tgt_in)) for m in self.members]
        return torch.log_softmax(torch.stack(logps).mean(0), dim=-1)
