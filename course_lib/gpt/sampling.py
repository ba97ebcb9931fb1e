"""Sampling text from a character model (the tour notebook's samples)."""
from __future__ import annotations

import torch
from torch import nn


@torch.no_grad()
def sample(model: nn.Module, idx: torch.Tensor, steps: int, temperature: float = 1.0, top_k: int | None = None,
           greedy: bool = False, generator: torch.Generator | None = None) -> torch.Tensor:
    """Extend ``idx`` (B, T) by ``steps`` tokens, sampled (or argmax when ``greedy``)."""
    if temperature <= 0:
        raise ValueError(f"temperature must be positive, got {temperature}")
    model.eval()
    context = model.get_block_size()
    for _ in range(steps):
        logits, _ = model(idx[:, -context:])
        logits = logits[:, -1, :] / temperature  # (B, vocab)
        if top_k is not None:
            kth = torch.topk(logits, top_k).values[:, [-1]]
            logits = logits.masked_fill(logits < kth, float("-inf"))
        if greedy:
            nxt = logits.argmax(dim=-1, keepdim=True)
        else:
            nxt = torch.multinomial(torch.softmax(logits, dim=-1), 1, generator=generator)
        idx = torch.cat([idx, nxt], dim=1)
    return idx
