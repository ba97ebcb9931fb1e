"""The probe job puts back, before each notebook, the process-wide settings a fresh kernel starts with."""
from __future__ import annotations

import subprocess
import sys
import textwrap

from conftest import REPO

IN_A_FRESH_PROCESS = textwrap.dedent("""
    import os, sys, warnings
    sys.path[:0] = [{repo!r}]
    import torch
    from autograder.inside.process_state import ProcessState

    fresh = ProcessState.taken()
    fresh.restore()
    print("untouched", "torch._dynamo" in sys.modules)
    torch.use_deterministic_algorithms(True, warn_only=True)
    torch.set_default_dtype(torch.float64)
    torch.set_grad_enabled(False)
    os.environ["STUDENT"] = "1"
    warnings.simplefilter("error")
    fresh.restore()
    print("restored", torch.are_deterministic_algorithms_enabled(),
          torch.is_deterministic_algorithms_warn_only_enabled(), torch.get_default_dtype(), torch.is_grad_enabled(),
          "STUDENT" in os.environ, warnings.filters == fresh.warning_filters)
""")


def test_a_restore_puts_back_what_a_notebook_changed_and_imports_nothing_when_nothing_changed():
    """Does a restore undo deterministic algorithms, the dtype, grad mode, the environment and warning filters a
    notebook changed, while a restore with nothing changed leaves torch._dynamo unimported (0.8 CPU-s a job)?"""
    done = subprocess.run([sys.executable, "-I", "-c", IN_A_FRESH_PROCESS.format(repo=str(REPO))],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.splitlines() == ["untouched False", "restored False False torch.float32 True False True"]
