"""Plots the notebooks show: loss curves, accuracy tables, attention maps, histograms, position embeddings.

Every plot has a title and labelled axes; heatmaps use a colour map whose lightness rises
monotonically, so they read the same printed in grey and to colour-blind readers; two bar
series differ in pattern as well as colour. With ``COURSE_PLOTS=off`` they draw nothing and
return a stand-in that takes whatever a cell does next with the plot: the score of record's probe job
runs every cell, as Run All does, and shows its plots to nobody; widgets are inert while grading anyway.
"""
from __future__ import annotations

import functools
import os

import numpy as np
import torch

from course_lib.notebook.plots_off import OFF

# lightness rises end to end (unlike jet, rainbow or RdBu, whose ends are equally dark in grey)
CMAP = "viridis"


class NotDrawn:
    """What a plot returns where plots are off, in place of its Axes or Figure: a student's cell that goes on with it
    (``ax.set_yscale("log")``, ``fig.axes[0].set_title(...)``, ``for ax in fig.axes: ...``) runs to its end, as it
    does in Jupyter, instead of stopping at None and leaving the rest of the cell undefined. Every attribute, call
    and item is itself again; it iterates as empty."""

    def __getattr__(self, name: str) -> NotDrawn:
        if name.startswith("__"):  # copy, pickle and the like ask for protocols it does not have
            raise AttributeError(name)
        return self

    def __call__(self, *args, **kwargs) -> NotDrawn:
        return self

    def __getitem__(self, key) -> NotDrawn:
        return self

    def __setitem__(self, key, value) -> None:
        pass

    def __iter__(self):
        return iter(())

    def __len__(self) -> int:
        return 0

    def __bool__(self) -> bool:
        return True  # as an Axes or a Figure is

    def __repr__(self) -> str:
        return "<plot not drawn: plots are off while grading>"


def drawing() -> bool:
    """Whether the course's plots draw here: not where ``COURSE_PLOTS=off`` (the score of record's job, nbgrader's
    autograde), so a cell can skip computing what only a plot would show."""
    return os.environ.get(OFF[0]) != OFF[1]


def _drawn(plot):
    """``plot``, or a stand-in (``NotDrawn``) where plots are off."""
    @functools.wraps(plot)
    def draw(*args, **kwargs):
        return plot(*args, **kwargs) if drawing() else NotDrawn()
    return draw


def pyplot():
    """matplotlib.pyplot, imported at the first plot: the grader's jobs load the notebooks (which import this module)
    but draw nothing, so they skip pyplot's slow import."""
    import matplotlib.pyplot as plt

    return plt


@_drawn
def plot_loss(history: list[dict], title: str = "training loss", ax=None, smooth: int = 20):
    """Loss per step, with a running mean over ``smooth`` steps."""
    ax = ax or pyplot().subplots(figsize=(7, 3.5))[1]
    steps = [h["step"] for h in history]
    losses = [h["loss"] for h in history]
    ax.plot(steps, losses, alpha=0.3, label="per step")
    if len(losses) >= smooth:
        running = torch.tensor(losses).unfold(0, smooth, 1).mean(1).tolist()
        ax.plot(steps[smooth - 1:], running, label=f"mean of {smooth}")
    ax.set_xlabel("step")
    ax.set_ylabel("cross-entropy (nats)")
    ax.set_title(title)
    ax.legend()
    return ax


@_drawn
def plot_accuracies(rows: list[tuple[str, float]], baseline: float, ax=None,
                    title: str = "dev accuracy per model"):
    """Bar chart of dev accuracy per model, with the majority-place baseline as a line."""
    ax = ax or pyplot().subplots(figsize=(6, 3))[1]
    labels = [r[0] for r in rows]
    ax.barh(labels, [100 * r[1] for r in rows])
    ax.axvline(100 * baseline, color="k", linestyle="--", label="majority place")
    ax.set_xlabel("dev accuracy (%)")
    ax.set_ylabel("model")
    ax.set_title(title)
    ax.legend()
    return ax


@_drawn
def plot_stored_vs_answered(rows: dict[str, tuple[float, float]], ax=None,
                            title: str = "what each model stored, and what it answers"):
    """Per model, the share of dev biographies it completes with the right place after
    pretraining beside the share of dev questions it answers after finetuning."""
    ax = ax or pyplot().subplots(figsize=(6, 3))[1]
    labels = list(rows)
    at = np.arange(len(labels))
    ax.barh(at - 0.2, [100 * rows[k][0] for k in labels], height=0.4, label="stored: completes its biography")
    # hatched as well as another colour: the two series stay apart in grey
    ax.barh(at + 0.2, [100 * rows[k][1] for k in labels], height=0.4, label="answered: dev question",
            hatch="//", edgecolor="white")
    ax.set_yticks(at, labels)
    ax.invert_yaxis()  # first model on top
    ax.set_xlabel("dev people (%)")
    ax.set_ylabel("model")
    ax.set_title(title)
    ax.set_xlim(0, 100)
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.25), ncol=2, fontsize=8)
    return ax


@_drawn
def plot_attention_maps(maps: dict[str, torch.Tensor], tokens: list[str] | None = None):
    """One heatmap per named (T, T) attention matrix, side by side."""
    fig, axes = pyplot().subplots(1, len(maps), figsize=(4.5 * len(maps), 4), squeeze=False)
    for ax, (name, att) in zip(axes[0], maps.items()):
        image = ax.imshow(att.detach().cpu().numpy(), cmap=CMAP, vmin=0)
        fig.colorbar(image, ax=ax, label="attention weight")
        ax.set_title(name)
        if tokens is not None:
            ax.set_xticks(range(len(tokens)), tokens, fontsize=7)
            ax.set_yticks(range(len(tokens)), tokens, fontsize=7)
        ax.set_xlabel("attended position")
        ax.set_ylabel("query position")
    fig.tight_layout()
    return fig


@_drawn
def plot_histograms(values: dict[str, list[float]], bins: int = 30, xlabel: str | None = None):
    """One histogram per named list, side by side; the x axis says ``xlabel`` (default: the list's name)."""
    fig, axes = pyplot().subplots(1, len(values), figsize=(4.5 * len(values), 3), squeeze=False)
    for ax, (name, vals) in zip(axes[0], values.items()):
        ax.hist(vals, bins=bins)
        ax.set_title(name)
        ax.set_xlabel(xlabel or name)
        ax.set_ylabel("count")
    fig.tight_layout()
    return fig


@_drawn
def plot_position_embeddings(phi: torch.Tensor, title: str = "sinusoidal position embeddings"):
    """A (T, d) position-embedding matrix as a heatmap: position along x, dimension along y."""
    fig, ax = pyplot().subplots(figsize=(7, 3))
    values = phi.detach().cpu().numpy().T
    # not a diverging map: its ends are equally dark in grey, so -1 and +1 would look alike
    limit = max(float(np.abs(values).max()), 1e-12)
    image = ax.imshow(values, aspect="auto", cmap=CMAP, vmin=-limit, vmax=limit)
    fig.colorbar(image, ax=ax, label="value")
    ax.set_xlabel("position t")
    ax.set_ylabel("dimension")
    ax.set_title(title)
    fig.tight_layout()
    return fig
