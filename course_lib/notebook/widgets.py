"""Interactive explorers. Under nbgrader (NBGRADER_EXECUTION set) they do nothing.

The explorers only ever use queries the student built: they never contain an answer.
"""
from __future__ import annotations

import os

import torch

from course_lib.gpt.attention_math import DTYPE, attend, sample_keys
from course_lib.notebook.plots import pyplot


def grading() -> bool:
    return bool(os.environ.get("NBGRADER_EXECUTION"))


def head_comparison(means: torch.Tensor, a: int, b: int, single: torch.Tensor, heads: list[torch.Tensor],
                    stretch: float, scale: float = 1.0, samples: int = 300, seed: int = 0):
    """Weights c puts on v_a and v_b over many key samples, for one query and for the average of several heads.

    Keys are sampled around ``means`` with k_a stretched along mu_a by ``stretch``; every query is multiplied
    by ``scale``. The values are the standard basis, so c[a] is c's weight on v_a and c[b] its weight on v_b.
    Returns (single (samples, 2), multi (samples, 2)).
    """
    n, d = means.shape
    values = torch.eye(n, d, dtype=DTYPE)
    g = torch.Generator().manual_seed(seed)
    one, many = [], []
    for _ in range(samples):
        keys = sample_keys(means, alpha=1e-6, stretched=a, stretch=stretch, generator=g)
        c1 = attend(scale * single, keys, values)
        c2 = sum(attend(scale * q, keys, values) for q in heads) / len(heads)
        one.append(c1[[a, b]])
        many.append(c2[[a, b]])
    return torch.stack(one), torch.stack(many)


def head_comparison_figure(means, a, b, single, heads, stretch: float, scale: float = 1.0, samples: int = 300):
    """The explorer's two scatter plots (one head, two heads) of c's weights on v_a and v_b."""
    one, many = head_comparison(means, a, b, single, heads, stretch, scale, samples)
    plt = pyplot()
    fig, axes = plt.subplots(1, 2, figsize=(9, 3.5), sharey=True)
    for ax, (name, c) in zip(axes, [("your one head (q_single)", one), ("your two heads (q_1, q_2)", many)]):
        # dots against a large plus: the target reads by shape, not only by its red
        ax.scatter(c[:, 0], c[:, 1], s=8, alpha=0.5, label="c, one key sample each")
        ax.plot([0.5], [0.5], "r+", markersize=14, markeredgewidth=2, label="(v_a + v_b) / 2")
        ax.set_xlim(-0.05, 1.05)
        ax.set_ylim(-0.05, 1.05)
        ax.set_xlabel("weight of v_a in c")
        ax.set_ylabel("weight of v_b in c")  # on both: each plot reads on its own
        ax.set_title(f"{name}: spread {float(c[:, 0].std()):.3f}", fontsize=10)
        ax.legend(loc="upper right", fontsize=8)
    fig.tight_layout()
    return fig


def plot_head_comparison(means, a, b, single, heads, stretch: float, scale: float = 1.0, samples: int = 300):
    head_comparison_figure(means, a, b, single, heads, stretch, scale, samples)
    pyplot().show()


def _vector(value, name: str, d: int) -> torch.Tensor:
    if value is None:  # its cell's placeholder, not written yet: env.needs shows a reminder
        raise NotImplementedError
    if not isinstance(value, torch.Tensor) or tuple(value.shape) != (d,) or value.is_complex():
        shape = tuple(value.shape) if isinstance(value, torch.Tensor) else type(value).__name__
        raise ValueError(f"{name} should be a vector of length {d} (found {shape})")
    return value.detach().to(DTYPE)


def head_explorer(means=None, a: int = 0, b: int = 1, q_single=None, q_1=None, q_2=None) -> None:
    """Sliders for the stretch of k_a and a factor on your queries; plots c for your one head against your two.

    Pass the notebook's ``means``, ``a``, ``b`` and your own ``q_single`` (part c) and ``q_1``, ``q_2`` (part d).
    Inert (returns None) while grading.
    """
    if grading():
        return None
    if means is None:
        print("head_explorer needs means, a, b and your q_single, q_1, q_2")
        return None
    d = means.size(1)
    try:
        single = _vector(q_single, "q_single", d)
        heads = [_vector(q_1, "q_1", d), _vector(q_2, "q_2", d)]
    except ValueError as err:
        print(f"(explorer not shown: {err})")
        return None
    import ipywidgets as widgets

    style = {"description_width": "initial"}
    layout = widgets.Layout(width="420px")

    def show(stretch: float, scale: float) -> None:
        plot_head_comparison(means, a, b, single, heads, stretch, scale)

    widgets.interact(
        show,
        stretch=widgets.FloatSlider(value=0.5, min=0.0, max=2.0, step=0.05, description="stretch of k_a (variance)",
                                    style=style, layout=layout),
        scale=widgets.FloatSlider(value=1.0, min=0.05, max=3.0, step=0.05, description="factor on your queries",
                                  style=style, layout=layout),
    )
    return None
