"""Resource limits for a process about to run untrusted code, and dying with its parent.

The confinement itself is ``autograder.confinement.sandbox``."""
from __future__ import annotations

import ctypes
import os
import resource
import signal

PR_SET_PDEATHSIG = 1  # prctl(2)


def limit_resources(memory_mb: int | None, cpu_seconds: int | None = None) -> None:
    """Cap address space (a hog gets MemoryError) and CPU time (for code ignoring interrupts)."""
    for kind, value in ((resource.RLIMIT_AS, memory_mb and memory_mb * 1024 * 1024),
                        (resource.RLIMIT_CPU, cpu_seconds)):
        if value:
            _, hard = resource.getrlimit(kind)
            value = value if hard == resource.RLIM_INFINITY else min(value, hard)
            resource.setrlimit(kind, (value, value))


def die_with_parent(parent_variable: str) -> None:
    """SIGKILL this process when the process (thread) that started it ends (Linux only).
    ``parent_variable`` names the environment variable holding the parent's pid, if it set one: a
    parent already gone before the signal was armed ends this process at once."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    except (OSError, AttributeError):
        return
    parent = os.environ.get(parent_variable, "")
    if parent.isdigit() and os.getppid() != int(parent):
        os._exit(1)
