"""Confinement for untrusted submission code, built on bubblewrap and cgroups (no mount code of our own).

A confined command sees an *allowlist*: the Python environment and the course
library read-only, the folders a job names (its own copies of what it needs),
and a size-capped scratch ``/tmp``; nothing else of the host (no course folder,
no gradebook, no other student). It runs
- in new PID, network, IPC, UTS and cgroup namespaces (bubblewrap), so it can
  neither see nor signal any other process nor reach the network, and every
  process it starts dies with it (``--die-with-parent``, and the cgroup is
  killed when the job ends);
- as ``nobody`` with no capabilities and ``no_new_privs`` (util-linux setpriv);
- in cgroups capping memory, process count and CPU (v1 controllers or v2).

``status()`` says whether this host can do all that; graders refuse to run
unconfined unless the instructor says so (``--unconfined``).
"""
from __future__ import annotations

import os
import re
import shutil
import signal
import sys
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

from course_lib.layout import REPO

COURSE_LIB = REPO / "course_lib"
NOBODY = 65534  # uid and gid the confined code runs as
CGROUP_ROOT = Path("/sys/fs/cgroup")
CGROUP_PARENT = "course-grader"  # every job's cgroup lives under this one
# read-only system folders an interpreter needs; /etc only for user and library lookups
SYSTEM_DIRS = ("/usr", "/lib", "/lib64", "/bin", "/sbin")
SYSTEM_FILES = ("/etc/passwd", "/etc/group", "/etc/ld.so.cache", "/etc/nsswitch.conf", "/etc/localtime",
                "/etc/fonts")  # fonts: matplotlib asks fontconfig (fc-list), which says "Fontconfig error" without it


@dataclass(frozen=True)
class Limits:
    """What one confined job may use."""

    memory_mb: int = 4096  # resident memory (cgroup) and address space (rlimit, a MemoryError first)
    scratch_mb: int = 256  # size of the private /tmp (tmpfs); also the largest file it can write
    max_processes: int = 64  # processes and threads (cgroup pids.max)
    cpus: float = 1.0  # CPU share (cgroup quota), so one job cannot starve the others
    open_files: int = 256  # file descriptors (rlimit)


@dataclass
class Mounts:
    """What a confined job sees besides the Python environment and course_lib."""

    read_only: dict[str, str] = field(default_factory=dict)  # host path -> path inside
    writable: dict[str, str] = field(default_factory=dict)  # host path -> path inside (sockets, nothing else)


def status() -> str | None:
    """None when this host can confine jobs, else what is missing (said to the instructor)."""
    if sys.platform != "linux":
        return "confinement needs Linux"
    if os.geteuid() != 0:
        return "confinement needs root (bubblewrap's namespaces and cgroups are set up as root)"
    for tool in ("bwrap", "setpriv"):
        if shutil.which(tool) is None:
            package = "bubblewrap" if tool == "bwrap" else "util-linux"
            return f"{tool} is not installed (apt-get install {package})"
    if cgroup_layout() is None:
        return f"no writable memory and pids cgroup controllers under {CGROUP_ROOT}"
    return None


def cgroup_layout() -> str | None:
    """'v2', 'v1', or None when neither has writable memory and pids controllers."""
    unified = CGROUP_ROOT / "cgroup.controllers"
    if unified.is_file():
        wanted = {"memory", "pids"}
        return "v2" if wanted <= set(unified.read_text().split()) and os.access(CGROUP_ROOT, os.W_OK) else None
    if all(os.access(CGROUP_ROOT / c, os.W_OK) for c in ("memory", "pids")):
        return "v1"
    return None


def python_paths() -> list[str]:
    """The interpreter's folders: the virtual environment and the Python it was made from."""
    paths = {os.path.realpath(sys.prefix), os.path.realpath(sys.base_prefix), sys.prefix, sys.base_prefix}
    exe = Path(sys.executable)
    paths.add(str(exe.parent))
    paths.add(os.path.dirname(os.path.realpath(exe)))
    # keep only the outermost of nested paths
    ordered = sorted(paths, key=len)
    return [p for i, p in enumerate(ordered) if not any(p.startswith(q.rstrip("/") + "/") for q in ordered[:i])]


def bwrap_argv(command: list[str], mounts: Mounts, limits: Limits, chdir: str = "/tmp",
               env: dict[str, str] | None = None) -> list[str]:
    """The bubblewrap command line that runs ``command`` confined (see the module docstring)."""
    argv = ["bwrap", "--unshare-ipc", "--unshare-pid", "--unshare-net", "--unshare-uts", "--unshare-cgroup-try",
            "--die-with-parent", "--new-session", "--hostname", "sandbox", "--clearenv"]
    for folder in SYSTEM_DIRS:
        if os.path.isdir(folder) and not os.path.islink(folder):
            argv += ["--ro-bind", folder, folder]
        elif os.path.islink(folder):
            argv += ["--symlink", os.readlink(folder), folder]
    argv += ["--perms", "0755", "--dir", "/etc"]  # made by bwrap otherwise, 0700: nobody could read under it
    for path in SYSTEM_FILES:
        if os.path.exists(path):
            argv += ["--ro-bind", path, path]
    argv += ["--proc", "/proc", "--dev", "/dev"]
    # the scratch folders come before the binds: a course or venv under /tmp is bound on top of them, not hidden
    argv += ["--perms", "01777", "--size", str(limits.scratch_mb * 2 ** 20), "--tmpfs", "/tmp"]
    argv += ["--perms", "01777", "--size", str(16 * 2 ** 20), "--tmpfs", "/dev/shm"]
    binds = [(path, path) for path in python_paths()]
    # the course library at its own path, so the editable install's finder still finds it
    binds.append((str(COURSE_LIB), str(COURSE_LIB)))
    binds += list(mounts.read_only.items())
    # bwrap makes missing parents of a mount point private (0700): make them traversable for nobody first
    made = {"/tmp", "/dev/shm", "/dev", "/proc"}
    parents = sorted({str(p) for _, d in [*binds, *mounts.writable.items()] for p in Path(d).parents
                      if str(p) != "/"} - made, key=len)
    for parent in parents:
        if parent.split("/")[1] not in {Path(f).name for f in SYSTEM_DIRS}:
            argv += ["--perms", "0755", "--dir", parent]
    for host, inside in binds:
        argv += ["--ro-bind", host, inside]
    for host, inside in mounts.writable.items():
        argv += ["--bind", host, inside]
    base_env = {"PATH": f"{Path(sys.executable).parent}:/usr/bin:/bin", "HOME": "/tmp", "TMPDIR": "/tmp",
                "MPLCONFIGDIR": "/tmp", "IPYTHONDIR": "/tmp/.ipython", "JUPYTER_RUNTIME_DIR": "/tmp/jupyter",
                "OMP_NUM_THREADS": "1", "COURSE_THREADS": "1", "PYTHONDONTWRITEBYTECODE": "1",
                "PYTHONHASHSEED": "0", "LANG": "C.UTF-8", "USER": "nobody", "LOGNAME": "nobody"}
    for key, value in {**base_env, **(env or {})}.items():
        argv += ["--setenv", key, value]
    argv += ["--chdir", chdir, "--"]
    # become nobody with no capabilities: nothing above can be undone from inside
    argv += ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups", "--inh-caps=-all",
             "--bounding-set=-all", "--no-new-privs"]
    return argv + command


JOB_CGROUP = re.compile(r"^job-(\d+)-[0-9a-f]{8}$")  # a job's cgroup: the grading process's pid, a random tag


def remove_orphans() -> list[Path]:
    """Remove the empty job cgroups of grading processes that died without cleaning up (a worker killed
    with SIGKILL, say); a folder still holding a process, or of a live grader, stays. Returns those removed."""
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
