"""The decode's key/value cache for the reference synthesizer: only the values are kept.

A dense synthesizer scores a position from that position alone (ReLU(x_t A + b1) B + b2, SPEC Part 1), so the scores
of a new position need nothing of the earlier ones, and its output needs only their values. With this the decode
answers a synthesizer part's questions as it answers a vanilla part's: one position a step instead of the whole
sequence again (0.58-0.78 -> 0.21 CPU-s for the smoke preset's 240 questions, timed in one process). It restates the
reference's ``forward`` (solutions/a5/05_synthesizer.ipynb) for new rows; tests/autograder/inside/test_decoding.py
checks that the decode's answers are those of the reference's own ``forward``, trained params and fresh ones alike.
"""
from __future__ import annotations

import torch
import torch.nn.functional as F


@torch.no_grad()
def synthesizer_forward_cached(self, x: torch.Tensor, cache: tuple[torch.Tensor] | None):
    """The attention's output for new positions x (B, T_new, C) after those whose values ``cache`` holds (eval only),
    and the cache with theirs added: the reference's ``forward`` on the whole sequence, its last T_new rows."""
    B, T, C = x.size()
    hs = C // self.n_head
    a = self.w1(x).view(B, T, self.n_head, hs).transpose(1, 2)  # (B, nh, T, hs)
    v = self.value(x).view(B, T, self.n_head, hs).transpose(1, 2)  # (B, nh, T, hs)
    if cache is not None:
        v = torch.cat([cache[0], v], dim=2)  # (B, nh, T_past + T, hs)
    past = v.size(2) - T
    scores = F.relu(a) @ self.w2[:, :past + T] + self.b2[:past + T]  # (B, nh, T, T_past + T)
    scores = scores.masked_fill(self.mask[:, :, past:past + T, :past + T] == 0, float("-inf"))
    y = (F.softmax(scores, dim=-1) @ v).transpose(1, 2).contiguous().view(B, T, C)  # (B, T, C)
    return self.proj(y), (v,)  # (GPT.forward_cached reads the past's length from the cache's first tensor)


def with_cache(reference: type) -> type:
    """The reference synthesizer class with the cache: its own parameters, names and ``forward``."""
    return type(reference.__name__, (reference,), {"forward_cached": synthesizer_forward_cached})
