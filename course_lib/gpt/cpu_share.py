"""How many CPUs this process may use and how many other work keeps busy: torch's threads follow both.

Torch starts one thread per core whatever else runs, and beside other busy work its threads wait for each
other at every operation (benchmarks/FINDINGS.md, "Threads from the machine's share"). The share is the
smallest of: the CPUs the process may run on (its affinity), its cgroup's CPU quota (v2 ``cpu.max`` on the
process's cgroup and its parents, v1 ``cpu.cfs_quota_us``) and ``CPU_LIMIT`` (what JupyterHub passes a
server it gives a CPU limit). Of that share a run takes what other processes leave of its CPUs, measured from
``/proc/stat``, when it starts and, through ``FollowShare``, every few seconds while it trains.
"""
from __future__ import annotations

import math
import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import torch

PROC_CGROUP = Path("/proc/self/cgroup")
CGROUP_ROOT = Path("/sys/fs/cgroup")
PROC_STAT = Path("/proc/stat")
# a CPU counts as free when other work leaves this much of it (background daemons take a few percent)
FREE_MARGIN = 0.35


@dataclass(frozen=True)
class Share:
    """The CPUs this process may use, and what bounds them."""

    cpus: float  # the share: the smallest bound below
    affinity: int  # CPUs the process may run on
    quota: float | None = None  # its cgroup's CPU quota in CPUs (None: none)
    limit: float | None = None  # CPU_LIMIT in CPUs (None: unset)

    @property
    def threads(self) -> int:
        """The most threads the share keeps busy: whole CPUs, at least one."""
        return max(1, math.floor(self.cpus + 1e-9))

    @property
    def bounded(self) -> bool:
        """True when a quota or limit, not the CPUs alone, sets the share (a hub's server)."""
        return self.cpus < self.affinity

    def describe(self) -> str:
        """ "this machine's share: 2 CPUs" or, under a quota or CPU_LIMIT, "this server's share: 1 CPU"."""
        whose = "this server's" if self.bounded else "this machine's"
        return f"{whose} share: {_cpus(self.cpus)}"


def _cpus(n: float) -> str:
    text = f"{n:g}" if n != int(n) else f"{int(n)}"
    return f"{text} CPU" + ("" if n == 1 else "s")


def affinity() -> set[int]:
    """The CPUs the process may run on (every CPU where the OS cannot say)."""
    if hasattr(os, "sched_getaffinity"):
        return set(os.sched_getaffinity(0))
    return set(range(os.cpu_count() or 1))


def _read(path: Path) -> str | None:
    try:
        return path.read_text().strip()
    except OSError:
        return None


def _v2_quota(folder: Path, root: Path) -> float | None:
    """The tightest ``cpu.max`` from ``folder`` up to ``root``, in CPUs."""
    quotas = []
    while True:
        text = _read(folder / "cpu.max")
        if text and not text.startswith("max"):
            quota, _, period = text.partition(" ")
            quotas.append(int(quota) / int(period or 100_000))
        if folder == root or root not in folder.parents:
            break
        folder = folder.parent
    return min(quotas) if quotas else None


def _v1_quota(folder: Path, root: Path) -> float | None:
    """The tightest ``cpu.cfs_quota_us / cpu.cfs_period_us`` from ``folder`` up to ``root``, in CPUs."""
    quotas = []
    while True:
        quota, period = _read(folder / "cpu.cfs_quota_us"), _read(folder / "cpu.cfs_period_us")
        if quota and period and int(quota) > 0:
            quotas.append(int(quota) / int(period))
        if folder == root or root not in folder.parents:
            break
        folder = folder.parent
    return min(quotas) if quotas else None


def cgroup_quota(proc_cgroup: Path = PROC_CGROUP, root: Path = CGROUP_ROOT) -> float | None:
    """The CPU quota of this process's cgroup (v2 or v1), in CPUs; None when there is none or no cgroups."""
    text = _read(proc_cgroup)
    if not text:
        return None
    quotas = []
    for line in text.splitlines():
        _, controllers, path = line.split(":", 2)
        relative = path.lstrip("/")
        if controllers == "":  # v2: mounted at the root, or at root/unified beside v1 (hybrid)
            mount = root if (root / "cgroup.controllers").is_file() else root / "unified"
            reader = _v2_quota
        elif "cpu" in controllers.split(","):
            mount = next((root / name for name in (controllers, "cpu,cpuacct", "cpu") if (root / name).is_dir()),
                         None)
            reader = _v1_quota
        else:
            continue
        if mount is None or not mount.is_dir():
            continue
        # inside a container the process's path may not exist under the mount: its own cgroup is the mount's root
        folder = mount / relative if (mount / relative).is_dir() else mount
        quota = reader(folder, mount)
        if quota is not None:
            quotas.append(quota)
    return min(quotas) if quotas else None


def cpu_limit() -> float | None:
    """``CPU_LIMIT`` in CPUs (JupyterHub sets it for a spawner's cpu_limit), None when unset or not a number."""
    try:
        value = float(os.environ.get("CPU_LIMIT", ""))
    except ValueError:
        return None
    return value if value > 0 else None


def cpu_share() -> Share:
    """This process's share of the machine's CPUs."""
    cpus = len(affinity())
    quota, limit = cgroup_quota(), cpu_limit()
    bounds = [b for b in (cpus, quota, limit) if b is not None]
    return Share(min(bounds), cpus, quota, limit)


class CpuMeter:
    """CPU time that other processes took on this process's CPUs, between one reading and the next."""

    def __init__(self, stat: Path = PROC_STAT):
        self.stat = stat
        self.cpus = {f"cpu{n}" for n in affinity()}
        self.tick = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
        self.last = self._reading()

    def _reading(self) -> tuple[float, float, float] | None:
        """(wall seconds, CPU seconds busy on our CPUs, this process's CPU seconds), None without /proc/stat."""
        text = _read(self.stat)
        if text is None:
            return None
        busy = 0
        for line in text.splitlines():
            fields = line.split()
            if fields and fields[0] in self.cpus:
                # user nice system idle iowait irq softirq steal: busy is all but idle and iowait
                values = [int(v) for v in fields[1:9]]
                busy += sum(values) - values[3] - values[4]
        return time.monotonic(), busy / self.tick, time.process_time()

    def others(self) -> float | None:
        """CPUs that other processes kept busy since the last call (or the meter's start); None if unknown."""
        now = self._reading()
        last, self.last = self.last, now
        if now is None or last is None or now[0] - last[0] < 0.05:
            return None
        wall = now[0] - last[0]
        return max(0.0, (now[1] - last[1]) - (now[2] - last[2])) / wall


@dataclass(frozen=True)
class ThreadChoice:
    """How many threads torch trains with, and why."""

    threads: int  # torch's intra-op threads
    share: Share  # this process's share of the CPUs
    others: float | None = None  # CPUs other work kept busy when it was chosen (None: not measured)
    fixed_by: str | None = None  # what fixed the number ("COURSE_THREADS=1", "asked for"); None: the share did

    @property
    def follows(self) -> bool:
        """True when the share chose the number, so it may follow the share as the run trains."""
        return self.fixed_by is None

    def describe(self) -> str:
        """ "1 CPU thread (this server's share: 1 CPU)", "... (COURSE_THREADS=1)", ..."""
        plural = "s" if self.threads != 1 else ""
        if self.fixed_by is not None:
            why = self.fixed_by
        else:
            why = self.share.describe()
            if self.others is not None and self.others >= 1 - FREE_MARGIN:
                why += f", {self.others:.1f} kept busy by other work"
        return f"{self.threads} CPU thread{plural} ({why})"


def threads_for(share: Share, others: float | None) -> int:
    """Threads that fit the share and what other work leaves of its CPUs: whole free CPUs, at least one."""
    if others is None:
        return share.threads
    free = share.affinity - others + FREE_MARGIN
    return max(1, min(share.threads, math.floor(free)))


def choose_threads(requested: int | None = None, window: float = 0.25) -> ThreadChoice:
    """``requested`` threads, else ``COURSE_THREADS``, else what the share and other work leave (measured for
    ``window`` seconds)."""
    share = cpu_share()
    fixed_by = "asked for"
    if requested is None and os.environ.get("COURSE_THREADS", "").strip():
        requested = int(os.environ["COURSE_THREADS"])
        fixed_by = f"COURSE_THREADS={requested}"
    if requested is not None:
        if requested < 1:
            raise ValueError(f"num_threads must be at least 1, got {requested}")
        return ThreadChoice(requested, share, fixed_by=fixed_by)
    meter = CpuMeter()
    time.sleep(window)
    others = meter.others()
    return ThreadChoice(threads_for(share, others), share, others)


class FollowShare:
    """A trainer callback (on_batch_end): every ``seconds``, torch's threads become what the share and the other
    work of the last interval leave; ``say`` hears each change in one line."""

    def __init__(self, share: Share, seconds: float = 5.0, say: Callable[[str], None] | None = None):
        self.share = share
        self.seconds = seconds
        self.say = say
        self.meter = CpuMeter()
        self.next = time.monotonic() + seconds

    def __call__(self, trainer=None) -> None:
        if time.monotonic() < self.next:
            return
        self.next = time.monotonic() + self.seconds
        others = self.meter.others()
        if others is None:
            return
        threads, before = threads_for(self.share, others), torch.get_num_threads()
        if threads != before:
            torch.set_num_threads(threads)
            if self.say is not None:
                self.say(f"threads {before} -> {threads}: other work kept {others:.1f} of {_cpus(self.share.affinity)}"
                         f" busy ({self.share.describe()})")
