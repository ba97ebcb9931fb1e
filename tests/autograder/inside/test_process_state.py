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


def test_forgetting_the_working_folders_modules_resolves_links_as_realpath_does(tmp_path, monkeypatch):
    """Are exactly the modules whose real file is in the working folder forgotten, through linked folders and files?"""
    import os
    import types

    from autograder.inside.process_state import forget_modules_under

    working, elsewhere = tmp_path / "work", tmp_path / "elsewhere"
    (working / "pkg").mkdir(parents=True)
    elsewhere.mkdir()
    for path in (working / "helper.py", working / "pkg" / "__init__.py", elsewhere / "other.py"):
        path.write_text("")
    (tmp_path / "into_work").symlink_to(working)  # a folder that is a link into the working folder
    (elsewhere / "linked_in.py").symlink_to(working / "helper.py")  # a file that is a link into it
    (working / "linked_out.py").symlink_to(elsewhere / "other.py")  # a file in it that is a link out
    files = {"helper": working / "helper.py", "pkg": working / "pkg" / "__init__.py",
             "via_folder": tmp_path / "into_work" / "helper.py", "via_file": elsewhere / "linked_in.py",
             "linked_out": working / "linked_out.py", "other": elsewhere / "other.py",
             "dotted": working / "pkg" / ".." / "helper.py", "missing": tmp_path / "gone" / "x.py"}
    modules = {f"fake_{name}": types.ModuleType(f"fake_{name}") for name in files}
    for name, path in files.items():
        modules[f"fake_{name}"].__file__ = str(path)
    monkeypatch.setattr(sys, "modules", {**sys.modules, **modules})
    prefix = os.path.join(os.path.realpath(working), "")
    expected = {name for name, path in files.items() if os.path.realpath(path).startswith(prefix)}

    forget_modules_under(str(working))

    assert {name for name in files if f"fake_{name}" not in sys.modules} == expected
    assert expected == {"helper", "pkg", "via_folder", "via_file", "dotted"}
