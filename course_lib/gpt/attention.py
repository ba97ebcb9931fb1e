"""Attention layers: vanilla causal self-attention (given) and the synthesizer's parameters.

Shapes: B batch, T time, C = n_embd channels, nh heads, hs = C // nh head size.
"""
from __future__ import annotations

import math
from typing import Protocol

import torch
import torch.nn.functional as F
from torch import nn

from course_lib.gpt.dropout import make_dropout, zero_dropped


class AttentionConfig(Protocol):
    """What an attention layer reads from a GPTConfig."""

    n_embd: int
    n_head: int
    block_size: int
    attn_pdrop: float
    resid_pdrop: float
    attention_impl: str
    fast_dropout: bool  # optional: cheap CPU dropout masks (course_lib.gpt.dropout)


def _fast_dropout(config: AttentionConfig) -> bool:
    return bool(getattr(config, "fast_dropout", False))  # an optional field: a config may lack it


def causal_attention_dropout(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, p: float,
                             causal_bias: torch.Tensor, dropout: nn.Module | None = None) -> torch.Tensor:
    """dropout_p(softmax(QK^T / sqrt(hs) + causal)) V for CPU training, in few passes over the (T, T) weights.

    q, k, v are (B, nh, T, hs); causal_bias is (>= T, >= T) with 0 on and below the
    diagonal and -inf above. The scale and the mask ride inside one baddbmm, and
    dropout's 1 / (1 - p) multiplies the (T, hs) output instead of the (T, T) weights.
    Equal, in distribution and to float error, to the manual path with fast dropout.
    With p = 0 no mask is drawn (the bf16 path below). Given a ``dropout`` module, it
    drops the weights instead (torch's own dropout, scaled there): the bf16 path with
    attention dropout but without fast dropout.
    """
    B, nh, T, hs = q.shape
    q2, k2, v2 = (t.reshape(B * nh, T, hs) for t in (q, k, v))
    scores = torch.baddbmm(causal_bias[:T, :T], q2, k2.transpose(1, 2), alpha=1.0 / math.sqrt(hs))
    att = F.softmax(scores, dim=-1)  # (B*nh, T, T)
    if dropout is not None:
        return (dropout(att) @ v2).view(B, nh, T, hs)
    if p == 0.0:
        return (att @ v2).view(B, nh, T, hs)
    return (zero_dropped(att, p, 1.0) @ v2).mul_(1.0 / (1.0 - p)).view(B, nh, T, hs)


def _check_input(x: torch.Tensor, n_embd: int, max_len: int) -> None:
    if x.dim() != 3 or x.size(-1) != n_embd:
        raise ValueError(f"attention expects x of shape (B, T, {n_embd}), got {tuple(x.shape)}")
    if x.size(1) > max_len:
        raise ValueError(f"sequence length {x.size(1)} exceeds the attention's limit {max_len}")


class CausalSelfAttention(nn.Module):
    """Multi-head masked self-attention with a fast and a readable path.

    ``attention_impl="sdpa"`` calls torch's fused scaled_dot_product_attention;
    ``"manual"`` spells out softmax(QK^T/sqrt(hs)) V. They agree to float error.
    With attention dropout in training on a CPU, SDPA falls back to a slow
    unfused path, so ``fast_dropout`` sdpa configs take ``causal_attention_dropout`` there.
    SDPA's CPU kernel in bfloat16 (under bf16 autocast) is slower still than the
    baddbmm path (benchmarks/FINDINGS.md), so bf16 on the CPU takes that path too.
    """

    def __init__(self, config: AttentionConfig):
        super().__init__()
        if config.n_embd % config.n_head != 0:
            raise ValueError(f"n_embd ({config.n_embd}) must be divisible by n_head ({config.n_head})")
        self.key = nn.Linear(config.n_embd, config.n_embd)
        self.query = nn.Linear(config.n_embd, config.n_embd)
        self.value = nn.Linear(config.n_embd, config.n_embd)
        self.fast_dropout = _fast_dropout(config)
        self.attn_drop = make_dropout(config.attn_pdrop, self.fast_dropout)
        self.resid_drop = make_dropout(config.resid_pdrop, self.fast_dropout)
        self.proj = nn.Linear(config.n_embd, config.n_embd)
        mask = torch.tril(torch.ones(config.block_size, config.block_size))
        self.register_buffer("mask", mask.view(1, 1, config.block_size, config.block_size), persistent=False)
        # (block_size, block_size): 0 where allowed, -inf in the future
        self.register_buffer("causal_bias", torch.zeros_like(mask).masked_fill(mask == 0, float("-inf")),
                             persistent=False)
        self.n_head = config.n_head
        self.block_size = config.block_size
        self.attn_pdrop = config.attn_pdrop
        self.impl = config.attention_impl

    def _heads(self, t: torch.Tensor) -> torch.Tensor:
        B, T, C = t.size()
        return t.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)  # (B, nh, T, hs)

    def _fused_heads(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """q, k, v (B, nh, T, hs), contiguous, from one matmul over the three projections side by side.

        The same weights as ``query``, ``key`` and ``value`` (so the same checkpoints);
        one wide matmul and one copy into head order instead of three of each, and
        under autocast one cast of x instead of three.
        """
        B, T, C = x.size()
        weight = torch.cat([self.query.weight, self.key.weight, self.value.weight])  # (3C, C)
        bias = torch.cat([self.query.bias, self.key.bias, self.value.bias])  # (3C,)
        # (B, T, 3, nh, hs)
        qkv = F.linear(x, weight, bias).view(B, T, 3, self.n_head, C // self.n_head)
        return qkv.permute(2, 0, 3, 1, 4).contiguous().unbind(0)  # each (B, nh, T, hs)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        _check_input(x, self.proj.in_features, self.block_size)
        B, T, C = x.size()
        if self.impl == "sdpa":
            q, k, v = self._fused_heads(x)  # (B, nh, T, hs)
        else:  # the readable path: one projection each
            k, q, v = self._heads(self.key(x)), self._heads(self.query(x)), self._heads(self.value(x))
        dropping = self.training and self.attn_pdrop > 0
        sdpa_on_cpu = self.impl == "sdpa" and x.device.type == "cpu"
        # y: (B, nh, T, hs) on every path
        if sdpa_on_cpu and self.fast_dropout and dropping:
            y = causal_attention_dropout(q, k, v, self.attn_pdrop, self.causal_bias)
        elif sdpa_on_cpu and q.dtype == torch.bfloat16:
            # torch's dropout: fast dropout took the branch above
            drop = self.attn_drop if dropping else None
            y = causal_attention_dropout(q, k, v, 0.0, self.causal_bias, drop)
        elif self.impl == "sdpa":
            p = self.attn_pdrop if self.training else 0.0
            y = F.scaled_dot_product_attention(q, k, v, dropout_p=p, is_causal=True)
        else:
            att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))  # (B, nh, T, T)
            att = att.masked_fill(self.mask[:, :, :T, :T] == 0, float("-inf"))
            att = self.attn_drop(F.softmax(att, dim=-1))
            y = att @ v  # (B, nh, T, hs)
        y = y.transpose(1, 2).contiguous().view(B, T, C)  # re-assemble heads side by side
        return self.resid_drop(self.proj(y))

    def forward_cached(self, x: torch.Tensor, cache: tuple[torch.Tensor, torch.Tensor] | None):
        """Attention for new positions x (B, T_new, C) given the keys/values of earlier ones (eval only).

        Returns (y, cache) with the cache extended by the new positions; equal to
        running ``forward`` on the whole sequence and keeping the last T_new rows.
        """
        B, T, C = x.size()
        # (B, nh, T, hs) each
        k, q, v = self._heads(self.key(x)), self._heads(self.query(x)), self._heads(self.value(x))
        if cache is not None:
            k = torch.cat([cache[0], k], dim=2)  # (B, nh, T_past + T, hs)
            v = torch.cat([cache[1], v], dim=2)
        past = k.size(2) - T
        # new position i (absolute past + i) may see keys 0 .. past + i
        mask = self.mask[0, 0, past:past + T, :past + T].bool()  # (T, T_past + T)
        y = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)  # (B, nh, T, hs)
        y = y.transpose(1, 2).contiguous().view(B, T, C)
        return self.proj(y), (k, v)


class SynthesizerAttentionBase(nn.Module):
    """The parameters of the dense synthesizer (SPEC Part 1); ``forward`` is the student's.

    Per head i: Y_i = softmax(ReLU(X A_i + b1) B + b2) (X V_i), with
      w1     Linear(C, C): A and b1 for all heads at once, split into heads
      w2     (hs, block_size - 1): B, shared by all heads, uniform in +-0.001
      b2     (block_size - 1,)
      value  Linear(C, C): V for all heads
      proj   Linear(C, C): the output projection after concatenating heads
      mask   (1, 1, block_size, block_size) lower-triangular causal mask
    """

    def __init__(self, config: AttentionConfig):
        super().__init__()
        if config.n_embd % config.n_head != 0:
            raise ValueError(f"n_embd ({config.n_embd}) must be divisible by n_head ({config.n_head})")
        self.w1 = nn.Linear(config.n_embd, config.n_embd)
        self.w2 = nn.Parameter(torch.zeros(config.n_embd // config.n_head, config.block_size - 1))
        self.b2 = nn.Parameter(torch.zeros(config.block_size - 1))
        self.value = nn.Linear(config.n_embd, config.n_embd)
        self.proj = nn.Linear(config.n_embd, config.n_embd)
        fast = _fast_dropout(config)
        self.attn_drop = make_dropout(config.attn_pdrop, fast)
        self.resid_drop = make_dropout(config.resid_pdrop, fast)
        mask = torch.tril(torch.ones(config.block_size, config.block_size))
        self.register_buffer("mask", mask.view(1, 1, config.block_size, config.block_size), persistent=False)
        self.n_head = config.n_head
        self.block_size = config.block_size
        nn.init.uniform_(self.w2, -0.001, 0.001)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        raise NotImplementedError("write SynthesizerAttention.forward in your notebook's synthesizer cell")
