import torch

from course_lib.gpt.attention_math import (
    DTYPE,
    attend,
    attention_weights,
    orthonormal_vectors,
    position_free_layer,
    sample_keys,
    self_attention,
)


def test_weights_are_a_distribution_and_copying_works():
    """Are the attention weights a distribution, and does a large aligned query copy one value?"""
    keys = orthonormal_vectors(4, 6)
    values = torch.randn(4, 6, dtype=DTYPE)
    w = attention_weights(torch.randn(6, dtype=DTYPE), keys)
    assert torch.isclose(w.sum(), torch.tensor(1.0, dtype=DTYPE)) and bool((w > 0).all())
    assert torch.allclose(attend(30 * keys[1], keys, values), values[1], atol=1e-6)


def test_stretched_key_has_the_stated_covariance():
    """Does the stretched key vary along its mean with variance 1/2?"""
    means = orthonormal_vectors(3, 5)
    g = torch.Generator().manual_seed(0)
    eps = torch.stack([sample_keys(means, alpha=0.0, stretched=0, generator=g)[0] @ means[0] for _ in range(4000)])
    assert abs(eps.mean() - 1) < 0.05 and abs(eps.var() - 0.5) < 0.05


def test_self_attention_rows_and_equivariance():
    """Is self_attention one c_i per row, and is the position-free layer permutation-equivariant?"""
    X = torch.randn(4, 3, dtype=DTYPE)
    eye = torch.eye(3, dtype=DTYPE)
    assert self_attention(X, eye, eye, eye).shape == (4, 3)
    g = torch.Generator().manual_seed(1)
    params = [torch.randn(3, 3, generator=g, dtype=DTYPE) for _ in range(3)] + [
        torch.randn(3, 5, generator=g, dtype=DTYPE), torch.randn(5, generator=g, dtype=DTYPE),
        torch.randn(5, 3, generator=g, dtype=DTYPE), torch.randn(3, generator=g, dtype=DTYPE)]
    P = torch.eye(4, dtype=DTYPE)[[2, 0, 3, 1]]
    assert torch.allclose(position_free_layer(P @ X, *params), P @ position_free_layer(X, *params))
