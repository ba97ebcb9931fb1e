"""Dropout whose masks are cheap to draw on a CPU (same distribution, another random stream).

torch's CPU dropout draws one Bernoulli sample per element from a serial
Mersenne Twister on non-Intel CPUs (its parallel MKL path checks for an Intel
CPU) and keeps a float mask, which made up most of dropout's cost on the AMD CPUs
measured (benchmarks/FINDINGS.md). Here each 64-bit draw of the same generator yields
four 16-bit numbers, an element is dropped when its number falls in the lowest
``round(p * 65536)`` of the 65,536 values (p = 0.1 drops with probability
0.1000061), and a one-byte mask is kept for the backward pass. Survivors are
scaled by 1 / (1 - p) as usual. Seeded by ``torch.manual_seed`` like any other
torch randomness. On CUDA, torch's own dropout is already fast and is used
unchanged.
"""
from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn

_LEVELS = 1 << 16  # 16-bit numbers: the drop probability is a multiple of 1/65536


def drop_mask(shape: torch.Size | tuple[int, ...], p: float) -> torch.Tensor:
    """Bool tensor of ``shape``, True where an element is dropped (probability p to 1/65536)."""
    n = math.prod(shape)
    words = torch.empty((n + 3) // 4, dtype=torch.int64).random_(-(2 ** 63), None)  # 64 random bits each
    numbers = words.view(torch.int16)[:n].view(shape)  # uniform on [-32768, 32767]
    return numbers < round(p * _LEVELS) - _LEVELS // 2


class _ZeroDropped(torch.autograd.Function):
    """x with the dropped elements zeroed and the rest times ``scale``; the backward does the same to the gradient.

    One pass each way over x, and the saved mask is one byte per element
    (``masked_fill`` would copy x first and ``x * mask`` would cast the mask to float).
    """

    @staticmethod
    def forward(ctx, x: torch.Tensor, drop: torch.Tensor, scale: float) -> torch.Tensor:
        ctx.save_for_backward(drop)
        ctx.scale = scale
        out = torch.where(drop, 0.0, x)
        return out if scale == 1.0 else out.mul_(scale)

    @staticmethod
    @torch.autograd.function.once_differentiable
    def backward(ctx, grad: torch.Tensor):
        (drop,) = ctx.saved_tensors
        g = torch.where(drop, 0.0, grad)
        return (g if ctx.scale == 1.0 else g.mul_(ctx.scale)), None, None


def zero_dropped(x: torch.Tensor, p: float, scale: float) -> torch.Tensor:
    """Zero each element of the CPU tensor x with probability p (to 1/65536) and multiply the rest by ``scale``."""
    return _ZeroDropped.apply(x, drop_mask(x.shape, p), scale)


def fast_dropout(x: torch.Tensor, p: float, training: bool = True) -> torch.Tensor:
    """``F.dropout(x, p, training)`` with the cheap mask on CPU tensors."""
    if not training or p == 0.0:
        return x
    if x.device.type != "cpu":
        return F.dropout(x, p, training=True)
    return zero_dropped(x, p, 1.0 / (1.0 - p))


class FastDropout(nn.Dropout):
    """``nn.Dropout`` drawing its masks with :func:`drop_mask` on the CPU."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return fast_dropout(x, self.p, self.training)


def make_dropout(p: float, fast: bool) -> nn.Dropout:
    """The dropout module a model config asks for."""
    return FastDropout(p) if fast else nn.Dropout(p)
