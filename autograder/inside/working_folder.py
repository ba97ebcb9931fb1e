"""The notebooks' working folder in the probe job: writable, in the sandbox's own scratch.

Under Jupyter (and nbgrader's autograde) a notebook runs in the folder it lies in: a cell may save a
file there (``%%writefile span_helpers.py``, a helper module written with ``open``) and a later cell,
or a later notebook, imports it, that folder being first on the kernel's module path. The probe job's
own folder is read-only, so the notebooks run in a folder of the job's scratch (the sandbox's private,
size-capped ``/tmp``, gone with it) that shows every file of the job's folder through a link
(notebooks, ``outputs/``, ``data/``, the checks' inputs) and keeps what the cells write. Nothing
written there reaches the grader's process or another student.
"""
from __future__ import annotations

import os
import sys
import tempfile

REQUEST = "request.json"  # the job's request: the grader's file, not the notebooks'
DECODE_FOLDER = "decode-params"  # the params the decode reads before the notebooks run (``decode_first``)


def working_folder(job_dir: str) -> str:
    """A new folder in the job's scratch showing every entry of ``job_dir`` (but the grader's own) through a link."""
    folder = tempfile.mkdtemp(prefix="notebooks-")
    for name in sorted(os.listdir(job_dir)):
        if name not in (REQUEST, DECODE_FOLDER):
            os.symlink(os.path.join(job_dir, name), os.path.join(folder, name))
    return folder


def enter_working_folder(folder: str) -> None:
    """Work in ``folder`` with it first on the module path, as ipykernel puts a kernel's working folder."""
    os.chdir(folder)
    sys.path.insert(0, folder)
