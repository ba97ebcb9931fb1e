"""What one student's unit of work may use on one step."""
from __future__ import annotations

from dataclasses import dataclass

MB = 2 ** 20


@dataclass(frozen=True)
class UnitLimits:
    """The bounds of one unit: its own process's memory, its wall time, what it hands back."""

    seconds: float = 120.0  # wall time of one unit; past it the unit and what it started are killed
    # address space the unit's own work may add to the preloaded code (soft RLIMIT_AS: MemoryError
    # past it); the jobs and nbgrader processes a unit starts set their own limits
    memory_mb: int = 2048
    answer_mb: int = 64  # the value it hands back, pickled; more is a failure, never read

    def __post_init__(self):
        if self.seconds <= 0 or self.memory_mb <= 0 or self.answer_mb <= 0:
            raise ValueError(f"unit limits must be positive: {self}")
