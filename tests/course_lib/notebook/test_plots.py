"""The notebooks' plots: each has a title and labelled axes, and reads in greyscale."""
from __future__ import annotations

import json
import re

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
import torch  # noqa: E402
from conftest import REPO, SOLUTIONS  # noqa: E402
from matplotlib import colormaps  # noqa: E402

from course_lib.notebook import plots  # noqa: E402

HISTORY = [{"step": i, "loss": 3.0 / (1 + i)} for i in range(40)]


def sinusoids(T: int, d: int) -> torch.Tensor:
    """A (T, d) matrix of sines and cosines in [-1, 1], like the position embeddings of notebook 08."""
    angles = torch.arange(T)[:, None] / 10000 ** (torch.arange(0, d, 2) / d)
    return torch.stack([angles.sin(), angles.cos()], dim=-1).reshape(T, d)


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


def lightness(cmap: str, n: int = 64) -> np.ndarray:
    """CIE L* (0 black .. 100 white) along a colour map: what it shows printed in grey."""
    rgb = colormaps[cmap](np.linspace(0, 1, n))[:, :3]
    linear = np.where(rgb <= 0.04045, rgb / 12.92, ((rgb + 0.055) / 1.055) ** 2.4)
    y = linear @ np.array([0.2126, 0.7152, 0.0722])
    return np.where(y > (6 / 29) ** 3, 116 * np.cbrt(y) - 16, y * (29 / 3) ** 3)


def readable_in_grey(cmap: str) -> bool:
    """Does lightness rise (or fall) steadily from end to end, so every value has its own grey?"""
    steps = np.diff(lightness(cmap))
    return bool((steps > 0).all() or (steps < 0).all()) and abs(steps.sum()) > 50


def plot_axes(fig) -> list:
    """The figure's plotting axes (colour bars left out: they carry their own label)."""
    return [ax for ax in fig.axes if ax.get_label() != "<colorbar>"]


def assert_titled_and_labelled(fig) -> None:
    for ax in plot_axes(fig):
        assert ax.get_title(), "a plot without a title"
        assert ax.get_xlabel() and ax.get_ylabel(), f"unlabelled axis in {ax.get_title()!r}"
    for ax in fig.axes:
        if ax.get_label() == "<colorbar>":
            assert ax.get_ylabel() or ax.get_xlabel(), "a colour bar without a label"


def every_plot():
    """Each plotting function of course_lib.notebook.plots on small made-up data: (name, figure)."""
    att = torch.softmax(torch.randn(6, 6), dim=-1)
    return [
        ("plot_loss", plots.plot_loss(HISTORY).figure),
        ("plot_accuracies", plots.plot_accuracies([("vanilla", 0.3), ("synthesizer", 0.1)], 0.05).figure),
        ("plot_stored_vs_answered", plots.plot_stored_vs_answered({"vanilla": (0.9, 0.4), "synth": (0.9, 0.1)}).figure),
        ("plot_attention_maps", plots.plot_attention_maps({"vanilla": att, "synthesizer": att}, list("abcdef"))),
        ("plot_histograms", plots.plot_histograms({"kept length": [1, 2, 3], "masked span length": [1, 1, 2]})),
        ("plot_position_embeddings", plots.plot_position_embeddings(sinusoids(20, 8))),
    ]


def test_every_plot_has_a_title_and_labelled_axes():
    """Does every plot the notebooks show carry a title and a label on each axis (and on each colour bar)?"""
    for name, fig in every_plot():
        try:
            assert_titled_and_labelled(fig)
        except AssertionError as err:
            raise AssertionError(f"{name}: {err}") from None


def test_every_heatmap_reads_in_greyscale():
    """Does every image the plots draw use a colour map whose lightness changes steadily end to end?"""
    images = [(name, im) for name, fig in every_plot() for ax in fig.axes for im in ax.get_images()]
    assert len(images) == 3
    for name, image in images:
        assert readable_in_grey(image.get_cmap().name), f"{name}: {image.get_cmap().name}"


def test_the_lightness_check_tells_good_maps_from_bad():
    """Does the greyscale check pass viridis and cividis and fail jet, rainbow and RdBu (dark at both ends)?"""
    assert readable_in_grey("viridis") and readable_in_grey("cividis") and readable_in_grey("Greys")
    for bad in ("jet", "rainbow", "RdBu", "coolwarm"):
        assert not readable_in_grey(bad), bad


def test_position_embeddings_keep_their_sign_apart():
    """Are -1 and +1 of the embeddings drawn at opposite ends of the map (a symmetric colour scale)?"""
    fig = plots.plot_position_embeddings(sinusoids(20, 8))
    low, high = fig.axes[0].get_images()[0].get_clim()
    assert low == -high and high == pytest.approx(1.0, abs=1e-3)


def test_two_bar_series_differ_by_more_than_colour():
    """Are the stored and answered bars told apart by a pattern too, not by hue alone?"""
    ax = plots.plot_stored_vs_answered({"vanilla": (0.9, 0.4)})
    hatches = [bar.get_hatch() for container in ax.containers for bar in container]
    assert len(set(hatches)) == 2


def test_notebook_cells_name_only_greyscale_colour_maps():
    """Does every colour map a notebook cell or course_lib names by hand read in greyscale?"""
    sources = [path.read_text(encoding="utf-8") for path in sorted(SOLUTIONS.glob("*.ipynb"))]
    sources = ["".join("".join(c["source"]) for c in json.loads(s)["cells"]) for s in sources]
    sources += [p.read_text(encoding="utf-8") for p in sorted((REPO / "course_lib").rglob("*.py"))]
    named = {m for s in sources for m in re.findall(r"""(?:cmap\s*=\s*|CMAP\s*=\s*)["'](\w+)["']""", s)}
    assert named, "no colour map found: the pattern is stale"
    for cmap in named:
        assert readable_in_grey(cmap), cmap


def test_loading_the_notebooks_leaves_pyplot_unimported():
    """Do the solution notebooks load without importing pyplot (the grader's jobs load them and draw nothing)?"""
    import subprocess
    import sys

    code = ("import sys\nfrom course_lib.loader.load import load_notebooks, notebook_paths\n"
            f"load_notebooks(notebook_paths({str(SOLUTIONS)!r}))\nprint('matplotlib.pyplot' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=REPO)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip().splitlines()[-1] == "False"


@pytest.mark.parametrize("switch, imported", [("off", "False"), ("", "True")])
def test_plots_are_off_where_nobody_sees_them(tmp_path, world_dir, switch, imported):
    """Does Run All of the solution notebooks while grading, as the score of record's probe job runs them, draw no
    plot with COURSE_PLOTS=off (pyplot never imported), and draw them without it?"""
    import os
    import subprocess
    import sys

    code = ("import sys\nfrom course_lib.loader.load import RUN_ALL, load_notebooks, notebook_paths\n"
            f"for path in notebook_paths({str(SOLUTIONS)!r}):\n"
            "    load_notebooks([path], module_name=path.stem[:2], skip_tags=RUN_ALL, errors='record')\n"
            "print('matplotlib.pyplot' in sys.modules)")
    env = dict(os.environ, NBGRADER_EXECUTION="autograde", COURSE_DATA_DIR=str(world_dir),
               COURSE_OUT_DIR=str(tmp_path), COURSE_PLOTS=switch, MPLBACKEND="Agg")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, cwd=SOLUTIONS,
                          env=env)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip().splitlines()[-1] == imported


@pytest.mark.parametrize("plot, args", [(plots.plot_loss, (HISTORY,)), (plots.plot_histograms, ({"a": [1.0, 2.0]},)),
                                        (plots.plot_position_embeddings, (sinusoids(8, 4),))])
def test_a_cell_that_goes_on_with_a_plot_runs_to_its_end_where_plots_are_off(monkeypatch, plot, args):
    """Where plots are off (the score of record's probe job), does what a cell does next with a plot's Axes or Figure
    (set a scale, index its axes, loop over them, save it) run without error, so the names the cell defines after it
    are defined, as in Jupyter, while nothing is drawn?"""
    monkeypatch.setenv(*plots.OFF)
    before = plt.get_fignums()
    drawn = plot(*args)
    drawn.set_yscale("log")
    drawn.axes[0].set_title("mine")
    for ax in drawn.axes:
        ax.grid(True)
    drawn.savefig("never-written.png")
    drawn.figure.tight_layout()
    assert drawn and len(drawn.axes) == 0 and "not drawn" in repr(drawn)
    assert plt.get_fignums() == before
    with pytest.raises(AttributeError):
        drawn.__deepcopy__  # noqa: B018 (protocols are not faked)


def test_a_cell_computes_what_only_a_plot_shows_only_where_plots_draw(monkeypatch):
    """Does ``drawing()`` say plots draw by default and not with COURSE_PLOTS=off, and does 03's histogram cell then
    draw its 2000 examples from the student's dataset where plots draw and none where they are off (grading)?"""
    import nbformat

    from course_lib.notebook import env

    cell = next(c for c in nbformat.read(SOLUTIONS / "03_span_corruption.ipynb", as_version=4).cells
                if c.metadata.get("nbgrader", {}).get("grade_id") == "03-given-5")
    calls = []

    class Corpus:  # the dataset's names the cell uses; each example an empty document's: "⁇⁇⁇" then padding
        from course_lib.gpt.vocab import MASK_CHAR, PAD_CHAR

        itos = {0: PAD_CHAR}

        class vocab:  # noqa: N801 (as the cell spells it)
            @staticmethod
            def decode(x):
                return Corpus.MASK_CHAR * 3

        def __len__(self):
            return 5

        def __getitem__(self, idx):
            calls.append(idx)
            return [0], [0]

    monkeypatch.delenv(plots.OFF[0], raising=False)
    assert plots.drawing()
    monkeypatch.setattr(plots, "plot_histograms", lambda values: None)
    exec(cell.source, {"env": env, "corpus": Corpus()})
    assert len(calls) == 2000
    monkeypatch.setenv(*plots.OFF)
    assert not plots.drawing()
    calls.clear()
    exec(cell.source, {"env": env, "corpus": Corpus()})
    assert calls == []
