"""The Jupyter kernel nbgrader grades submissions with: limited and confined (see autograder.isolation).

Started by jupyter_client from ``autograder/jupyter/kernels/course-grading/kernel.json``:
    python -m autograder.kernel -f CONNECTION_FILE
It caps memory and CPU time, hides the paths listed in GRADING_HIDDEN_PATHS,
becomes an unprivileged user when it can, then execs the ordinary IPython kernel.
Settings come from the environment nbgrader passes on (see nbgrader_setup):
    GRADING_MEMORY_MB     address-space limit (default 4096)
    GRADING_CPU_SECONDS   CPU-time limit, a backstop behind nbgrader's per-cell timeout (default 1800)
    GRADING_HIDDEN_PATHS  os.pathsep-separated paths the notebook code must not see
    GRADING_READABLE_PATHS  extra paths it must be able to read (data folders)
"""
from __future__ import annotations

import os
import sys
from pathlib import Path

from .isolation import confine, limit_resources

REPO = Path(__file__).resolve().parents[1]


def _paths(variable: str) -> list[str]:
    return [p for p in os.environ.get(variable, "").split(os.pathsep) if p]


def main(argv: list[str]) -> None:
    limit_resources(int(os.environ.get("GRADING_MEMORY_MB", "4096")),
                    int(os.environ.get("GRADING_CPU_SECONDS", "1800")))
    argv = list(argv)
    # jupyter_client wrote the connection file 0600 for this user: the unprivileged kernel reads its own copy
    connection = [argv[argv.index("-f") + 1]] if "-f" in argv else []
    readable = [sys.prefix, sys.base_prefix, str(REPO), os.getcwd(), *_paths("GRADING_READABLE_PATHS"),
                *(os.environ[v] for v in ("COURSE_DATA_DIR", "COURSE_OUT_DIR") if v in os.environ)]
    status, copies = confine(hidden=_paths("GRADING_HIDDEN_PATHS"), readable=readable, copy_in=connection)
    argv = [copies.get(a, a) for a in argv]
    print(f"grading kernel: {status}", file=sys.stderr, flush=True)
    os.execv(sys.executable, [sys.executable, "-m", "ipykernel_launcher", *argv])


if __name__ == "__main__":
    main(sys.argv[1:])
