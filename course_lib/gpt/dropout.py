"""Dropout whose masks are cheap to draw on a CPU (same distribution, another random stream).

torch's CPU dropout draws one Bernoulli sample per element from a serial
Mersenne Twister (its parallel MKL path is for Intel CPUs, and no faster there)
and keeps a float mask: most of dropout's cost on a CPU (benchmarks/FINDINGS.md).
Here each 64-bit draw of the same generator yields four 16-bit numbers, an
element is dropped when its number falls in the lowest ``round(p * 65536)`` of
the 65,536 values (p = 0.1 drops with probability 0.1000061). The mask becomes a
tensor of x's dtype holding 0 or 1 / (1 - p), and dropout is one multiply by it
each way, cheaper than ``torch.where`` over a bool mask. In bfloat16, whose
1 / (1 - p) is not exact, the mask holds 0 or 1 and the scale is a second
multiply by a Python float. Seeded by ``torch.manual_seed`` like any other torch
randomness. On CUDA, torch's own dropout is already fast and is used unchanged.
"""
from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn

_LEVELS = 1 << 16  # 16-bit numbers: the drop probability is a multiple of 1/65536


def _numbers(shape: torch.Size | tuple[int, ...]) -> torch.Tensor:
    """int16 tensor of ``shape``, uniform on [-32768, 32767]: four numbers from each 64-bit draw."""
    n = math.prod(shape)
    # 64 random bits each
    words = torch.empty((n + 3) // 4, dtype=torch.int64).random_(-(2 ** 63), None)
    return words.view(torch.int16)[:n].view(shape)


def _threshold(p: float) -> int:
    return round(p * _LEVELS) - _LEVELS // 2  # drops the lowest round(p * 65536) numbers of 65,536


def drop_mask(shape: torch.Size | tuple[int, ...], p: float) -> torch.Tensor:
    """Bool tensor of ``shape``, True where an element is dropped (probability p to 1/65536)."""
    return _numbers(shape) < _threshold(p)


def keep_mask(shape: torch.Size | tuple[int, ...], p: float, scale: float, dtype: torch.dtype) -> torch.Tensor:
    """Tensor of ``shape`` and ``dtype``: 0 where :func:`drop_mask` (same draw) drops, ``scale`` elsewhere."""
    kept = (_numbers(shape) >= _threshold(p)).to(dtype)
    return kept if scale == 1.0 else kept.mul_(scale)


def zero_dropped(x: torch.Tensor, p: float, scale: float) -> torch.Tensor:
    """Zero each element of the CPU tensor x with probability p (to 1/65536) and multiply the rest by ``scale``.

    The gradient is the same mask times the same scale: autograd's backward of a
    multiply by a tensor that needs no gradient.
    """
    if scale == 1.0 or x.dtype in (torch.float32, torch.float64):
        return x * keep_mask(x.shape, p, scale, x.dtype)
    # the scale as a Python float: at full precision, not rounded to x's dtype
    return (x * keep_mask(x.shape, p, 1.0, x.dtype)).mul_(scale)


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
