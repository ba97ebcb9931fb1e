"""Confine untrusted submission code before it starts: resource limits, a private view of files, no privileges.

Called in a process that is about to exec the untrusted program (a Jupyter
kernel, a sandboxed grading job). On Linux as root it
1. moves into a mount namespace of its own, so nothing below reaches the host;
2. lays an empty, read-only filesystem over each hidden path (test-set answers,
   the gradebook, other students' submissions);
3. makes the paths the program must read (the interpreter, the course code,
   its working folder) reachable by an unprivileged user, even when they lie
   under a private folder such as /root;
4. gives it a private, size-limited scratch space on /dev/shm (its HOME and
   TMPDIR), which vanishes with the process;
5. becomes ``nobody`` with no capabilities, so it can neither undo the above
   nor signal, read or write the grader's own files.
Without root only the resource limits apply; ``confine`` says so in its result.
"""
from __future__ import annotations

import ctypes
import os
import pwd
import resource
import stat
import shutil
from pathlib import Path

UNPRIVILEGED_USER = "nobody"
_CLONE_NEWNS = 0x00020000
_MS_RDONLY, _MS_NOSUID, _MS_NODEV, _MS_REMOUNT, _MS_BIND, _MS_MOVE, _MS_REC, _MS_PRIVATE = (
    1, 2, 4, 32, 4096, 8192, 16384, 1 << 18)


class IsolationError(OSError):
    """A confinement step failed (the program must not start half-confined)."""


def limit_resources(memory_mb: int | None, cpu_seconds: int | None = None) -> None:
    """Cap the address space (a hog gets MemoryError) and CPU time (a backstop for what ignores interrupts)."""
    for kind, value in ((resource.RLIMIT_AS, memory_mb and memory_mb * 1024 * 1024),
                        (resource.RLIMIT_CPU, cpu_seconds)):
        if value:
            _, hard = resource.getrlimit(kind)
            value = value if hard == resource.RLIM_INFINITY else min(value, hard)
            resource.setrlimit(kind, (value, value))


def _libc():
    return ctypes.CDLL(None, use_errno=True)


def _call(result: int, what: str) -> None:
    if result != 0:
        errno = ctypes.get_errno()
        raise IsolationError(errno, f"{what}: {os.strerror(errno)}")


def _mount(libc, source: str | None, target: Path, fstype: str | None, flags: int, data: str | None = None) -> None:
    enc = (lambda s: None if s is None else str(s).encode())
    _call(libc.mount(enc(source), enc(target), enc(fstype), flags, enc(data)), f"mount {target}")


def _traversable(path: Path) -> bool:
    return bool(path.stat().st_mode & stat.S_IXOTH)


def _expose(libc, needed: list[Path], staging: Path) -> None:
    """Make every folder on the way to each needed path traversable by others.

    A private folder D on the way gets an empty world-traversable tmpfs laid
    over it, into which the real children the paths need are bind-mounted back;
    everything else in D stays out of sight.
    """
    done: set[Path] = set()
    while True:
        # the shallowest private folder still on the way to some needed path, and the children it must keep
        blocked: dict[Path, set[str]] = {}
        for path in needed:
            for depth in range(1, len(path.parts)):
                folder = Path(*path.parts[:depth])
                if folder not in done and not _traversable(folder):
                    blocked.setdefault(folder, set()).add(path.parts[depth])
                    break
        if not blocked:
            return
        folder = min(blocked, key=lambda p: len(p.parts))
        keep = {child: staging / f"{len(done)}-{i}" for i, child in enumerate(sorted(blocked[folder]))}
        for child, stage in keep.items():
            if (folder / child).is_dir():
                stage.mkdir()
            else:
                stage.touch()
            _mount(libc, str(folder / child), stage, None, _MS_BIND | _MS_REC)
        _mount(libc, "tmpfs", folder, "tmpfs", _MS_NOSUID | _MS_NODEV, "mode=0755,size=64k")
        for child, stage in keep.items():
            target = folder / child
            if stage.is_dir():
                target.mkdir()
            else:
                target.touch()
            _mount(libc, str(stage), target, None, _MS_MOVE)
        done.add(folder)


def _hide(libc, path: Path, blank_file: Path) -> None:
    """Lay an empty, unreadable folder or file over ``path``."""
    if path.is_dir():
        _mount(libc, "tmpfs", path, "tmpfs", _MS_RDONLY | _MS_NOSUID | _MS_NODEV, "mode=0000,size=4k")
    else:
        _mount(libc, str(blank_file), path, None, _MS_BIND)
        _mount(libc, None, path, None, _MS_BIND | _MS_REMOUNT | _MS_RDONLY)


def confine(hidden: list[str | Path] = (), readable: list[str | Path] = (), owned: list[str | Path] = (),
            copy_in: list[str | Path] = (), scratch_mb: int = 1024) -> tuple[str, dict[str, str]]:
    """Confine this process (see the module docstring).

    ``owned`` paths are handed to the unprivileged user; ``copy_in`` files are
    copied into its private home first (e.g. a kernel's 0600 connection file).
    Returns a one-line description of what was applied and the new locations of
    the copied files. Raises IsolationError when a step fails part-way.
    """
    if not hasattr(os, "geteuid") or os.geteuid() != 0:
        return "not confined: files and processes are shared (confinement needs root on Linux)", {}
    user = pwd.getpwnam(UNPRIVILEGED_USER)
    libc = _libc()
    _call(libc.unshare(_CLONE_NEWNS), "unshare the mount namespace")
    _mount(libc, None, Path("/"), None, _MS_REC | _MS_PRIVATE)  # keep our mounts out of the host's view
    scratch = Path("/dev/shm")
    _mount(libc, "tmpfs", scratch, "tmpfs", _MS_NOSUID | _MS_NODEV, f"mode=0755,size={scratch_mb}m")
    home, staging = scratch / "home", scratch / "staging"
    home.mkdir(mode=0o700)
    staging.mkdir(mode=0o700)
    copies = {str(f): shutil.copy(f, home) for f in copy_in}
    needed = sorted({Path(os.path.abspath(p)) for p in [*readable, *owned] if os.path.exists(p)})
    _expose(libc, needed, staging)
    hidden = sorted({Path(os.path.abspath(p)) for p in hidden if os.path.exists(p)})
    # a path inside another hidden one is hidden with it
    hidden = [p for p in hidden if not any(q != p and q in p.parents for q in hidden)]
    blank_file = scratch / "hidden"
    blank_file.touch(mode=0o000)
    for path in hidden:
        _hide(libc, path, blank_file)
    for path in [home, *owned]:
        for root, dirs, files in os.walk(path):
            for name in [root, *(os.path.join(root, f) for f in dirs + files)]:
                os.chown(name, user.pw_uid, user.pw_gid)
    os.environ.update(HOME=str(home), TMPDIR=str(home), MPLCONFIGDIR=str(home), IPYTHONDIR=str(home / ".ipython"),
                      USER=user.pw_name, LOGNAME=user.pw_name)
    os.setgroups([])
    os.setgid(user.pw_gid)
    os.setuid(user.pw_uid)  # drops every capability: the mounts above cannot be undone
    return f"confined: user {user.pw_name}, {len(hidden)} hidden path(s), private scratch {scratch}", copies
