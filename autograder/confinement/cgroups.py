"""Cgroups for confined jobs: a memory, pids and CPU cap per job (v1 or v2), killed whole after.

``Cgroup`` makes one per job under ``course-grader/`` (named after the grading process, so the
folders of a grader killed with SIGKILL can be told apart and removed: ``remove_orphans``).
"""
from __future__ import annotations

import os
import re
import signal
import time
import uuid
from pathlib import Path

from autograder.confinement.limits import Limits

CGROUP_ROOT = Path("/sys/fs/cgroup")
CGROUP_PARENT = "course-grader"  # every job's cgroup lives under this one


def cgroup_layout() -> str | None:
    """'v2', 'v1', or None when neither has writable memory and pids controllers."""
    unified = CGROUP_ROOT / "cgroup.controllers"
    if unified.is_file():
        wanted = {"memory", "pids"}
        return "v2" if wanted <= set(unified.read_text().split()) and os.access(CGROUP_ROOT, os.W_OK) else None
    if all(os.access(CGROUP_ROOT / c, os.W_OK) for c in ("memory", "pids")):
        return "v1"
    return None


JOB_CGROUP = re.compile(r"^job-(\d+)-[0-9a-f]{8}$")  # job-<grading process's pid>-<random tag>


def remove_orphans() -> list[Path]:
    """Remove the empty job cgroups of grading processes that died without cleaning up (a worker
    killed with SIGKILL, say); a folder still holding a process, or of a live grader, stays. Returns
    those removed."""
    removed = []
    for parent in (CGROUP_ROOT / CGROUP_PARENT, *(CGROUP_ROOT / c / CGROUP_PARENT for c in ("memory", "pids", "cpu"))):
        for folder in parent.glob("job-*") if parent.is_dir() else []:
            match = JOB_CGROUP.match(folder.name)
            if not match or _alive(int(match.group(1))):
                continue
            try:
                folder.rmdir()  # the kernel refuses while a process is in it
                removed.append(folder)
            except OSError:
                pass
    return removed


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


class Cgroup:
    """A cgroup per job (memory, pids, CPU), v1 or v2; ``kill`` ends every process left in it."""

    def __init__(self, limits: Limits, name: str | None = None):
        self.layout = cgroup_layout()
        self.name = name or f"job-{os.getpid()}-{uuid.uuid4().hex[:8]}"
        self.folders: list[Path] = []
        remove_orphans()
        if self.layout == "v2":
            parent = CGROUP_ROOT / CGROUP_PARENT
            parent.mkdir(exist_ok=True)
            _try_write(parent / "cgroup.subtree_control", "+memory +pids +cpu")
            folder = parent / self.name
            folder.mkdir()
            self.folders = [folder]
            _try_write(folder / "memory.max", str(limits.memory_mb * 2 ** 20))
            _try_write(folder / "memory.swap.max", "0")
            _try_write(folder / "pids.max", str(limits.max_processes))
            _try_write(folder / "cpu.max", f"{int(limits.cpus * 100_000)} 100000")
        elif self.layout == "v1":
            for controller in ("memory", "pids", "cpu"):
                root = CGROUP_ROOT / controller
                if not os.access(root, os.W_OK):
                    continue
                folder = root / CGROUP_PARENT / self.name
                folder.mkdir(parents=True)
                self.folders.append(folder)
            for folder in self.folders:
                controller = folder.parent.parent.name
                if controller == "memory":
                    _try_write(folder / "memory.limit_in_bytes", str(limits.memory_mb * 2 ** 20))
                    _try_write(folder / "memory.memsw.limit_in_bytes", str(limits.memory_mb * 2 ** 20))
                elif controller == "pids":
                    _try_write(folder / "pids.max", str(limits.max_processes))
                elif controller == "cpu":
                    _try_write(folder / "cpu.cfs_period_us", "100000")
                    _try_write(folder / "cpu.cfs_quota_us", str(int(limits.cpus * 100_000)))

    def enter(self) -> None:
        """Move the calling process into the cgroup (called in the child before exec)."""
        for folder in self.folders:
            (folder / "cgroup.procs").write_text(str(os.getpid()))

    def out_of_memory(self) -> bool:
        """Did the kernel stop a process of this job for memory?"""
        for folder in self.folders:
            for name, key in (("memory.events", "oom_kill"), ("memory.oom_control", "oom_kill")):
                path = folder / name
                if path.is_file():
                    for line in path.read_text().splitlines():
                        field_name, _, value = line.partition(" ")
                        if field_name == key and value.strip() not in ("", "0"):
                            return True
        return False

    def pids(self) -> set[int]:
        """The processes in the job's cgroups now."""
        found: set[int] = set()
        for folder in self.folders:
            try:
                found |= {int(p) for p in (folder / "cgroup.procs").read_text().split()}
            except OSError:
                pass
        return found

    def kill(self) -> None:
        """SIGKILL every process left in the job's cgroup, then remove the cgroup."""
        if self.layout == "v2" and self.folders:
            _try_write(self.folders[0] / "cgroup.kill", "1")
        for _ in range(100):
            left = self.pids()
            if not left:
                break
            for pid in left:
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            time.sleep(0.02)
        for folder in self.folders:
            for _ in range(50):
                try:
                    folder.rmdir()
                    break
                except FileNotFoundError:
                    break
                except OSError:  # busy for a moment after the last process exits
                    time.sleep(0.02)


def _try_write(path: Path, value: str) -> None:
    try:
        path.write_text(value)
    except OSError:
        pass  # a controller file this kernel lacks: the other limits still apply
