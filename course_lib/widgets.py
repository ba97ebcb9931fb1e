"""Interactive explorers. Under nbgrader (NBGRADER_EXECUTION set) they do nothing."""
from __future__ import annotations

import os

import matplotlib.pyplot as plt
import torch

from .attention_math import DTYPE, attend, orthonormal_vectors, sample_keys


def grading() -> bool:
    return bool(os.environ.get("NBGRADER_EXECUTION"))


def single_vs_multi_head(beta: float, stretch: float, samples: int = 300, n: int = 6, d: int = 8, seed: int = 0):
    """Outputs c over many key samples for one head q = beta(mu_a + mu_b) and two heads q1 = beta mu_a, q2 = beta mu_b.

    Values are the basis vectors, so c's weight on v_a is c[0] and on v_b is c[1].
    Returns (single (samples, 2), multi (samples, 2)).
    """
    means = orthonormal_vectors(n, d, seed)
    values = torch.eye(n, d, dtype=DTYPE)
    g = torch.Generator().manual_seed(seed)
    single, multi = [], []
    for _ in range(samples):
        keys = sample_keys(means, alpha=1e-6, stretched=0, stretch=stretch, generator=g)
        c1 = attend(beta * (means[0] + means[1]), keys, values)
        c2 = 0.5 * (attend(beta * means[0], keys, values) + attend(beta * means[1], keys, values))
        single.append(c1[:2])
        multi.append(c2[:2])
    return torch.stack(single), torch.stack(multi)


def plot_head_comparison(beta: float, stretch: float, samples: int = 300):
    single, multi = single_vs_multi_head(beta, stretch, samples)
    fig, axes = plt.subplots(1, 2, figsize=(9, 3.5), sharey=True)
    for ax, (name, c) in zip(axes, [("one head", single), ("two heads", multi)]):
        ax.scatter(c[:, 0], c[:, 1], s=8, alpha=0.5)
        ax.plot([0.5], [0.5], "r+", markersize=14, label="(v_a + v_b) / 2")
        ax.set_xlim(-0.05, 1.05)
        ax.set_ylim(-0.05, 1.05)
        ax.set_xlabel("weight of v_a in c")
        ax.set_title(f"{name}: spread {c[:, 0].std():.3f}")
        ax.legend(loc="upper right")
    axes[0].set_ylabel("weight of v_b in c")
    fig.tight_layout()
    return fig


def head_explorer():
    """Sliders for beta and the stretch of k_a; plots c for one head vs two. Inert while grading."""
    if grading():
        return None
    import ipywidgets as widgets

    return widgets.interact(
        lambda beta, stretch: plot_head_comparison(beta, stretch) and None,
        beta=widgets.FloatSlider(value=10.0, min=0.5, max=40.0, step=0.5, description="β"),
        stretch=widgets.FloatSlider(value=0.5, min=0.0, max=2.0, step=0.05, description="stretch of k_a"),
    )
