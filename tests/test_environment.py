import re
import subprocess
import sys
import tomllib

from conftest import REPO


def _pins(lines):
    return {re.split(r"[=<>!~ ]", line.strip(), maxsplit=1)[0].lower(): line.strip().replace(" ", "")
            for line in lines}


def test_environment_yml_matches_pyproject():
    """Do environment.yml and pyproject.toml pin the same dependencies at the same versions?"""
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    extras = [d for extra in project["optional-dependencies"].values() for d in extra]
    from_project = _pins(project["dependencies"] + extras)
    yml = (REPO / "environment.yml").read_text()
    block = yml.split("- pip:", 1)[1]
    from_yml = _pins(m for m in re.findall(r"^\s+-\s+([A-Za-z][^\s#]*==[^\s#]+)", block, re.M))
    assert from_yml == from_project


def test_torch_is_pinned_to_the_local_wheel():
    """Is torch pinned exactly, so a fresh setup takes the CPU wheel on disk?"""
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    assert "torch==2.13.0" in project["dependencies"]


def test_nbformat_loads_without_building_an_iri_grammar():
    """Do nbformat and Jupyter's event schemas load, as an nbgrader command or a Jupyter server loads them (no
    course_lib first), without rfc3987_syntax, whose grammar took 0.8 CPU-s of every such process?"""
    code = ("import sys, nbformat, jupyter_events.validators; nbformat.validate(nbformat.v4.new_notebook()); "
            "print(sorted(m for m in sys.modules if m.startswith('rfc3987')))")
    done = subprocess.run([sys.executable, "-I", "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "[]"
