"""Attention scorers of the recurrent families: Bahdanau's additive score and Luong's three.

Every scorer splits its work in two so that a decoder pays for the source side once:

    keys = scorer.precompute(memory)                          # once per sentence batch
    context, weights = scorer(query, keys, memory, src_mask)  # every step (or all at once)

`memory` [N, S, D] holds the encoder outputs h_j (the values), `src_mask` [N, S] is True on
real source positions. A query is [N, Q] for one step or [N, T, Q] for T steps at once; the
context and weights come back as [N, D] and [N, S], or [N, T, D] and [N, T, S]. Weights are
exactly 0 on padded positions (their scores are set to -inf before the softmax) and sum to 1
over the real ones.
"""

from __future__ import annotations

import torch
from torch import nn


def attend(
    scores: torch.Tensor, memory: torch.Tensor, src_mask: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    """alpha = softmax(scores) over real positions, context = sum_j alpha_j h_j.

    scores [N, T, S], memory [N, S, D], src_mask [N, S] -> context [N, T, D], alpha [N, T, S].
    """
    weights = scores.masked_fill(~src_mask.unsqueeze(1), float("-inf")).softmax(dim=-1)
    return torch.bmm(weights, memory), weights


class Scorer(nn.Module):
    """Shared plumbing: one-step queries become T=1 queries, and back."""

    def precompute(self, memory: torch.Tensor) -> torch.Tensor:
        return memory

    def scores(self, query: torch.Tensor, keys: torch.Tensor) -> torch.Tensor:
        raise NotImplementedError  # [N, T, Q] x [N, S, K] -> [N, T, S]

    def forward(self, query, keys, memory, src_mask):
        one_step = query.dim() == 2
        if one_step:
            query = query.unsqueeze(1)
        context, weights = attend(self.scores(query, keys), memory, src_mask)
        if one_step:
            return context.squeeze(1), weights.squeeze(1)
        return context, weights


class AdditiveAttention(Scorer):
    """Bahdanau et al. (2015), eq. 6 and appendix A.1.2:

        e_tj = v_a^T tanh(W_a s_{t-1} + U_a h_j)

    U_a h_j does not depend on t, so `precompute` computes it once per sentence.
    Luong's `concat` score, v_a^T tanh(W_a [h_t; h_s]), is the same function of the
    current state h_t (W_a [h_t; h_s] = W_1 h_t + W_2 h_s), so it reuses this class.
    """

    def __init__(self, query_dim: int, key_dim: int, attn_dim: int):
        super().__init__()
        self.query_proj = nn.Linear(query_dim, attn_dim, bias=False)  # W_a
        self.key_proj = nn.Linear(key_dim, attn_dim)  # U_a (its bias stands for W_a's)
        self.v = nn.Linear(attn_dim, 1, bias=False)  # v_a

    def precompute(self, memory):
        return self.key_proj(memory)  # [N, S, A]

    def scores(self, query, keys):
        q = self.query_proj(query)  # [N, T, A]
        return self.v(torch.tanh(q.unsqueeze(2) + keys.unsqueeze(1))).squeeze(-1)


class DotAttention(Scorer):
    """Luong et al. (2015), eq. 8: score(h_t, h_s) = h_t^T h_s (needs equal sizes)."""

    def scores(self, query, keys):
        return torch.bmm(query, keys.transpose(1, 2))


class GeneralAttention(DotAttention):
    """Luong et al. (2015), eq. 8: score(h_t, h_s) = h_t^T W_a h_s, with W_a h_s precomputed."""

    def __init__(self, query_dim: int, key_dim: int):
        super().__init__()
        self.key_proj = nn.Linear(key_dim, query_dim, bias=False)  # W_a

    def precompute(self, memory):
        return self.key_proj(memory)  # [N, S, Q]


def luong_attention(score: str, query_dim: int, key_dim: int) -> Scorer:
    """Luong's scorer named by model.attention_score: dot, general or concat."""
    if score == "dot":
        if query_dim != key_dim:
            raise ValueError(f"dot attention needs equal sizes, got {query_dim} and {key_dim}")
        return DotAttention()
    if score == "general":
        return GeneralAttention(query_dim, key_dim)
    if score == "concat":
        return AdditiveAttention(query_dim, key_dim, query_dim)
    raise ValueError(f"unknown attention score '{score}' (dot, general or concat)")
