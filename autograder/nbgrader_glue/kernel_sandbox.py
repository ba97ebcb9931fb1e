"""What a grading kernel's sandbox gets: the environment it knows, the files it sees, its limits.

Shared by the per-notebook kernel (``kernel``) and the per-student sandbox its kernels are
forked from (``zygote``).
"""
from __future__ import annotations

import os
from pathlib import Path

from autograder.confinement import Limits, Mounts
from course_lib.layout import REPO

# what notebook code may know of the grader's environment
PASSED_ENV = ("COURSE_PRESET", "COURSE_DATA_DIR", "COURSE_OUT_DIR", "NBGRADER_EXECUTION",
              "NBGRADER_VALIDATING")
# hidden test cells import autograder.checks.hidden: only these files are mounted, never solutions/
HIDDEN_CHECK_FILES = ("__init__.py", "checks/__init__.py", "checks/hidden.py", "checks/twins.py")
INSIDE_SOCKETS = "/run/grading-kernel"  # where the kernel sees its private socket folder
MAX_PROCESSES = 64


def _paths(variable: str) -> list[str]:
    """The paths an environment variable lists (os.pathsep between them)."""
    return [p for p in os.environ.get(variable, "").split(os.pathsep) if p]


def limits_from_env() -> Limits:
    """The kernel's limits: GRADING_MEMORY_MB (default 4096), one CPU, MAX_PROCESSES."""
    return Limits(memory_mb=int(os.environ.get("GRADING_MEMORY_MB", "4096")), max_processes=MAX_PROCESSES, cpus=1.0)


def kernel_mounts(cwd: Path, private: Path) -> Mounts:
    """The allowlist beyond what bwrap_argv always gives (Python env, course_lib, /tmp). The notebook's folder is
    writable in the sandbox only (``Mounts.linked``): a helper a cell writes there is importable by the cells, and the
    notebooks, after it, as under Run All, and never reaches the folder nbgrader grades in."""
    read_only: dict[str, str] = {}
    extra = [*_paths("GRADING_READABLE_PATHS"), *(os.environ[v] for v in ("COURSE_DATA_DIR", "COURSE_OUT_DIR")
                                                   if os.environ.get(v))]
    for path in extra:  # bwrap fails on a missing source: a folder not made yet is simply not there
        if os.path.exists(path):  # at the path the notebook is told, even when that is a symlink
            read_only[os.path.realpath(path)] = os.path.abspath(path)
    for name in HIDDEN_CHECK_FILES:
        path = REPO / "autograder" / name
        read_only[str(path)] = str(path)
    # the kernel's sockets and its copy of the connection file; nothing else is writable
    return Mounts(read_only=read_only, writable={str(private): INSIDE_SOCKETS}, linked={str(cwd): str(cwd)})
