"""Shared fixtures: the reference solutions (loaded from the solution notebooks) and data paths."""
from __future__ import annotations

import os
from pathlib import Path

# under pytest-xdist two workers share the two cores: one torch thread each (and in every
# kernel or subprocess they start), or oversubscribed threads make cell timeouts flaky
if os.environ.get("PYTEST_XDIST_WORKER"):
    os.environ["OMP_NUM_THREADS"] = os.environ["COURSE_THREADS"] = "1"

import pytest  # noqa: E402
import torch  # noqa: E402

if os.environ.get("PYTEST_XDIST_WORKER"):
    torch.set_num_threads(1)

from course_lib.notebook_loader import load_notebooks, notebook_paths  # noqa: E402
from course_lib.runs import ORIGINAL_DATA_DIR  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
SOLUTIONS = REPO / "solutions" / "a5"
ORIGINAL_DATA = Path(os.environ.get("COURSE_ORIGINAL_DATA", ORIGINAL_DATA_DIR))


@pytest.fixture(scope="session")
def reference():
    """The graded parts as the instructor wrote them, loaded by the student loader."""
    return load_notebooks(notebook_paths(SOLUTIONS), module_name="reference_solutions")


@pytest.fixture(scope="session")
def original_data() -> Path:
    if not (ORIGINAL_DATA / "wiki.txt").is_file():
        pytest.skip(f"the original course files are not at {ORIGINAL_DATA}")
    return ORIGINAL_DATA


@pytest.fixture(scope="session")
def world_dir(tmp_path_factory) -> Path:
    from course_lib.world import write_world

    out = tmp_path_factory.mktemp("world")
    write_world(out, seed=0)
    return out
