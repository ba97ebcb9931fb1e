"""What one confined job may use: memory, scratch space, processes, CPU, open files."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Limits:
    """What one confined job may use."""

    memory_mb: int = 4096  # resident (cgroup) and address space (rlimit: a MemoryError first)
    scratch_mb: int = 256  # size of the private /tmp (tmpfs); also the largest file it can write
    max_processes: int = 64  # processes and threads (cgroup pids.max)
    cpus: float = 1.0  # CPU share (cgroup quota), so one job cannot starve the others
    open_files: int = 256  # file descriptors (rlimit)
