"""The plots' off switch: the one both graders set, and the one the plots read."""
from __future__ import annotations

import subprocess
import sys

from autograder.grading.code_parts import RUN_ALL_ENV
from autograder.nbgrader_glue.zygote import AUTOGRADE_ENV
from course_lib.notebook import plots
from course_lib.notebook.plots_off import OFF, OFF_ENV


def test_both_graders_set_the_switch_the_plots_read(monkeypatch):
    """Do the score of record's Run All and nbgrader's autograde kernels set the very switch that stops a plot?"""
    for env in (RUN_ALL_ENV, AUTOGRADE_ENV):
        assert {k: env[k] for k in OFF_ENV} == OFF_ENV
        for name, value in env.items():
            monkeypatch.setenv(name, value.replace("{job}", "/job"))
        assert not plots.drawing()
        assert isinstance(plots.plot_histograms([1, 2, 3]), plots.NotDrawn)
        monkeypatch.delenv(OFF[0])
        assert plots.drawing()


def test_the_switch_imports_nothing_heavy():
    """Can a kernel's launcher read the switch without importing torch, numpy or matplotlib?"""
    code = ("import sys; import course_lib.notebook.plots_off; "
            "print(sorted(m for m in ('torch', 'numpy', 'matplotlib') if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"
