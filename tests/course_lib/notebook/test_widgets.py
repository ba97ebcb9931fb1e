"""The head explorer: it shows the student's own queries, labels fit, and it prints nothing stray."""
from __future__ import annotations

import pytest
import torch

from course_lib.gpt.attention_math import DTYPE, orthonormal_vectors
from course_lib.notebook import env, widgets

MEANS = orthonormal_vectors(6, 8, seed=4)


@pytest.fixture
def not_grading(monkeypatch):
    monkeypatch.delenv("NBGRADER_EXECUTION", raising=False)


def test_two_heads_spread_less_than_one_with_a_stretched_key():
    """With k_a stretched, does the explorer's data show one head swinging and two heads holding steady?"""
    single = 20.0 * MEANS[0] + 20.0 * MEANS[1]
    one, two = widgets.head_comparison(MEANS, 0, 1, single, [20.0 * MEANS[0], 20.0 * MEANS[1]], stretch=0.5)
    assert one.shape == two.shape == (300, 2)
    assert float(one[:, 0].std()) > 0.4 and float(one[:, 0].std()) > 2 * float(two[:, 0].std())


def test_explorer_uses_the_given_queries_and_scale():
    """Does the plotted data come from the queries passed in, multiplied by the slider's factor?"""
    q = torch.zeros(8, dtype=DTYPE)
    one, two = widgets.head_comparison(MEANS, 0, 1, q, [q, q], stretch=0.5, scale=5.0, samples=10)
    assert torch.allclose(one, torch.full((10, 2), 1 / 6, dtype=DTYPE), atol=1e-3)  # a zero query: uniform


def test_explorer_returns_none_with_readable_sliders(monkeypatch, not_grading):
    """Does the cell show only the widget (returns None, no function repr) with full slider labels?"""
    ipywidgets = pytest.importorskip("ipywidgets")
    seen = {}

    def fake_interact(fn, **sliders):
        seen.update(sliders, fn=fn)
        return fn  # the real interact returns the function: its repr must not reach the cell's output

    monkeypatch.setattr(ipywidgets, "interact", fake_interact)
    q = 10.0 * MEANS[0]
    assert widgets.head_explorer(MEANS, 0, 1, q, q, q) is None
    for name in ("stretch", "scale"):
        assert seen[name].style.description_width == "initial", name
        assert seen[name].description
    assert widgets.head_explorer(MEANS, 0, 1, q.float(), q.long(), q) is None  # other dtypes are fine


def test_explorer_plots_have_titles_and_labelled_axes():
    """Does each of the explorer's two plots carry a title, both axis labels and a legend for its markers?"""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    q = 20.0 * MEANS[0]
    fig = widgets.head_comparison_figure(MEANS, 0, 1, q, [q, q], stretch=0.5, samples=5)
    try:
        assert len(fig.axes) == 2
        for ax in fig.axes:
            assert ax.get_title() and ax.get_xlabel() and ax.get_ylabel()
            assert len(ax.get_legend().get_texts()) == 2  # the samples and the target: told apart by shape too
    finally:
        plt.close(fig)


def test_slider_labels_are_whole_and_not_squeezed(monkeypatch, not_grading):
    """Are the slider labels full phrases, given their own width ('initial'), never a fixed width that cuts them?"""
    ipywidgets = pytest.importorskip("ipywidgets")
    seen = {}
    monkeypatch.setattr(ipywidgets, "interact", lambda fn, **sliders: seen.update(sliders))
    q = 10.0 * MEANS[0]
    widgets.head_explorer(MEANS, 0, 1, q, q, q)
    assert seen["stretch"].description == "stretch of k_a (variance)"
    assert seen["scale"].description == "factor on your queries"
    for slider in seen.values():
        assert slider.style.description_width == "initial"  # the label is as wide as its text
        assert slider.readout  # the value is shown as a number, not only as a handle's position


def test_explorer_explains_missing_or_malformed_queries(capsys, not_grading):
    """Does a wrong or missing query give a sentence, not a traceback?"""
    assert widgets.head_explorer(MEANS, 0, 1, [1.0] * 8, MEANS[0], MEANS[1]) is None
    assert "q_single should be a vector of length 8" in capsys.readouterr().out
    assert widgets.head_explorer() is None
    assert "needs" in capsys.readouterr().out


def test_needs_turns_an_undefined_name_into_a_reminder(capsys):
    """Run before its inputs exist, does a display cell say what to run or write instead of raising NameError?"""
    with env.needs("q_1 and q_2"):
        q_1  # noqa: F821, B018 - the name the student has not defined yet
    out = capsys.readouterr().out
    assert "q_1 is not defined yet" in out and "write q_1 and q_2 first" in out
    with pytest.raises(TypeError):
        with env.needs("q_1"):
            raise TypeError("a real bug")
