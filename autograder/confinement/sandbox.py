"""Confinement for untrusted submission code on bubblewrap and cgroups (no mount code of our own).

A confined command sees an *allowlist*: the Python environment and the course
library read-only, the folders a job names (its own copies of what it needs, or a
folder of links to them that takes new files in the sandbox only), and a size-capped
scratch ``/tmp``; nothing else of the host (no course folder,
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
import shutil
import sys
from dataclasses import dataclass, field
from pathlib import Path

from autograder.confinement.cgroups import CGROUP_ROOT, cgroup_layout
from autograder.confinement.limits import Limits
from course_lib.layout import REPO

COURSE_LIB = REPO / "course_lib"
NOBODY = 65534  # uid and gid the confined code runs as
LINKED_SOURCES = "/run/linked-folders"  # where the folders behind Mounts.linked are seen read-only
# read-only system folders an interpreter needs; /etc only for user and library lookups
SYSTEM_DIRS = ("/usr", "/lib", "/lib64", "/bin", "/sbin")
SYSTEM_FILES = ("/etc/passwd", "/etc/group", "/etc/ld.so.cache", "/etc/nsswitch.conf", "/etc/localtime",
                "/etc/fonts")  # matplotlib runs fc-list, which says "Fontconfig error" without it


@dataclass
class Mounts:
    """What a confined job sees besides the Python environment and course_lib."""

    read_only: dict[str, str] = field(default_factory=dict)  # host path -> path inside
    writable: dict[str, str] = field(default_factory=dict)  # host path -> inside (sockets only)
    # host folder -> path inside: a writable folder of the sandbox's own (a size-capped tmpfs) holding a link to each
    # entry of the host folder, seen read-only beside it, so a notebook may write files into its own folder (a
    # %%writefile helper) and nothing it writes leaves the sandbox
    linked: dict[str, str] = field(default_factory=dict)


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


def python_paths() -> list[str]:
    """The interpreter's folders: the virtual environment and the Python it was made from."""
    paths = {os.path.realpath(sys.prefix), os.path.realpath(sys.base_prefix), sys.prefix, sys.base_prefix}
    exe = Path(sys.executable)
    paths.add(str(exe.parent))
    paths.add(os.path.dirname(os.path.realpath(exe)))
    # keep only the outermost of nested paths
    ordered = sorted(paths, key=len)
    return [p for i, p in enumerate(ordered) if not any(p.startswith(q.rstrip("/") + "/") for q in ordered[:i])]


def linked_sources(mounts: Mounts) -> dict[str, str]:
    """Where inside the sandbox each ``Mounts.linked`` folder's own files are seen (its links lead there)."""
    return {inside: f"{LINKED_SOURCES}/{i}" for i, inside in enumerate(mounts.linked.values())}


def bwrap_argv(command: list[str], mounts: Mounts, limits: Limits, chdir: str = "/tmp",
               env: dict[str, str] | None = None, as_pid_1: bool = False) -> list[str]:
    """The bubblewrap command line that runs ``command`` confined (see the module docstring). With
    ``as_pid_1`` the command is the sandbox's init (pid 1), which nothing inside the sandbox can
    kill, and which reaps the orphans."""
    argv = ["bwrap", "--unshare-ipc", "--unshare-pid", "--unshare-net", "--unshare-uts", "--unshare-cgroup-try",
            "--die-with-parent", "--new-session", "--hostname", "sandbox", "--clearenv"]
    argv += ["--as-pid-1"] if as_pid_1 else []
    for folder in SYSTEM_DIRS:
        if os.path.isdir(folder) and not os.path.islink(folder):
            argv += ["--ro-bind", folder, folder]
        elif os.path.islink(folder):
            argv += ["--symlink", os.readlink(folder), folder]
    argv += ["--perms", "0755", "--dir", "/etc"]  # bwrap's default 0700 would shut out nobody
    for path in SYSTEM_FILES:
        if os.path.exists(path):
            argv += ["--ro-bind", path, path]
    argv += ["--proc", "/proc", "--dev", "/dev"]
    # scratch folders before the binds: a course or venv under /tmp is bound over them, not hidden
    argv += ["--perms", "01777", "--size", str(limits.scratch_mb * 2 ** 20), "--tmpfs", "/tmp"]
    argv += ["--perms", "01777", "--size", str(16 * 2 ** 20), "--tmpfs", "/dev/shm"]
    binds = [(path, path) for path in python_paths()]
    # the course library at its own path, so the editable install's finder still finds it
    binds.append((str(COURSE_LIB), str(COURSE_LIB)))
    binds += list(mounts.read_only.items())
    sources = linked_sources(mounts)
    binds += [(host, sources[inside]) for host, inside in mounts.linked.items()]
    # bwrap makes missing parents of a mount point 0700: make them traversable for nobody first
    made = {"/tmp", "/dev/shm", "/dev", "/proc"}
    parents = sorted({str(p) for _, d in [*binds, *mounts.writable.items(), *mounts.linked.items()]
                      for p in Path(d).parents if str(p) != "/"} - made, key=len)
    for parent in parents:
        if parent.split("/")[1] not in {Path(f).name for f in SYSTEM_DIRS}:
            argv += ["--perms", "0755", "--dir", parent]
    for host, inside in binds:
        argv += ["--ro-bind", host, inside]
    for host, inside in mounts.writable.items():
        argv += ["--bind", host, inside]
    for host, inside in mounts.linked.items():
        argv += ["--perms", "01777", "--size", str(limits.scratch_mb * 2 ** 20), "--tmpfs", inside]
        argv += [arg for name in sorted(os.listdir(host)) for arg in ("--symlink", f"{sources[inside]}/{name}",
                                                                      f"{inside}/{name}")]
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
