"""Resource limits for a process about to run untrusted code (the confinement itself is autograder.confinement)."""
from __future__ import annotations

import resource


def limit_resources(memory_mb: int | None, cpu_seconds: int | None = None) -> None:
    """Cap the address space (a hog gets MemoryError) and CPU time (a backstop for what ignores interrupts)."""
    for kind, value in ((resource.RLIMIT_AS, memory_mb and memory_mb * 1024 * 1024),
                        (resource.RLIMIT_CPU, cpu_seconds)):
        if value:
            _, hard = resource.getrlimit(kind)
            value = value if hard == resource.RLIM_INFINITY else min(value, hard)
            resource.setrlimit(kind, (value, value))
