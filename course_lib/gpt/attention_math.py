"""Small exact tools for the written parts: attention on explicit vectors, sampled keys,
a position-free Transformer layer, and sinusoidal position embeddings.

Vectors are rows: keys (n, d), values (n, d), a query (d,). Float64 throughout so
that "approximately" in the questions is about the maths, not rounding.
"""
from __future__ import annotations

import math

import torch

DTYPE = torch.float64


def attention_weights(q: torch.Tensor, keys: torch.Tensor) -> torch.Tensor:
    """alpha_i = softmax_i(k_i . q); q (d,), keys (n, d) -> (n,)."""
    if q.dim() != 1 or keys.dim() != 2 or keys.size(1) != q.size(0):
        raise ValueError(f"need q (d,) and keys (n, d); got {tuple(q.shape)} and {tuple(keys.shape)}")
    return torch.softmax(keys @ q, dim=0)


def attend(q: torch.Tensor, keys: torch.Tensor, values: torch.Tensor) -> torch.Tensor:
    """c = sum_i alpha_i v_i; -> (d_v,)."""
    if values.dim() != 2 or values.size(0) != keys.size(0):
        got = values.size(0) if values.dim() == 2 else values.shape
        raise ValueError(f"need one value per key; got {got} values for {keys.size(0)} keys")
    return attention_weights(q, keys) @ values


def orthonormal_vectors(n: int, d: int, seed: int = 0) -> torch.Tensor:
    """n orthonormal vectors in R^d as rows (n <= d)."""
    if n > d:
        raise ValueError(f"cannot have {n} orthonormal vectors in {d} dimensions")
    g = torch.Generator().manual_seed(seed)
    q, _ = torch.linalg.qr(torch.randn(d, n, generator=g, dtype=DTYPE))
    return q.T.contiguous()


def sample_keys(means: torch.Tensor, alpha: float = 1e-6, stretched: int | None = None, stretch: float = 0.5,
                generator: torch.Generator | None = None) -> torch.Tensor:
    """k_i ~ N(mu_i, alpha I), except k_stretched ~ N(mu, alpha I + stretch * mu mu^T)."""
    n, d = means.shape
    keys = means + math.sqrt(alpha) * torch.randn(n, d, generator=generator, dtype=DTYPE)
    if stretched is not None:
        # adding sqrt(stretch) * z * mu (z ~ N(0,1)) gives the extra covariance stretch * mu mu^T
        z = torch.randn((), generator=generator, dtype=DTYPE)
        keys[stretched] += math.sqrt(stretch) * z * means[stretched]
    return keys


def self_attention(X: torch.Tensor, K: torch.Tensor, Q: torch.Tensor, V: torch.Tensor) -> torch.Tensor:
    """Rows x_i of X (n, d); k_i = K x_i etc.; returns the rows c_i (n, d)."""
    keys, queries, values = X @ K.T, X @ Q.T, X @ V.T
    return torch.softmax(queries @ keys.T, dim=1) @ values


def position_free_layer(X: torch.Tensor, WQ, WK, WV, W1, b1, W2, b2) -> torch.Tensor:
    """Z = ReLU(H W1 + 1 b1) W2 + 1 b2 with H = softmax(Q K^T / sqrt(d)) V, Q = X WQ, K = X WK, V = X WV."""
    d = WQ.size(1)
    H = torch.softmax((X @ WQ) @ (X @ WK).T / math.sqrt(d), dim=1) @ (X @ WV)
    return torch.relu(H @ W1 + b1) @ W2 + b2
