"""Work for a unit whose module imports torch, as the grading steps' do (module-level, for the fork server)."""
from __future__ import annotations

import multiprocessing
import os

import torch  # noqa: F401 (what unpickling this module's functions costs the process that does it)


def maps_torch() -> tuple[bool, bool]:
    """(does this unit's process map torch's library, does the process that asked for it): what each imported."""
    def mapped(pid: int) -> bool:
        with open(f"/proc/{pid}/maps", encoding="utf-8") as f:
            return "libtorch" in f.read()

    return mapped(os.getpid()), mapped(multiprocessing.parent_process().pid)
