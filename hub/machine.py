"""What the course's hub keeps on this machine, shared by hub/jupyterhub_config.py, tools/ and `make hub`.

    python hub/machine.py tree     the users' tree of this checkout (tools/hub_users_python.sh builds it)
    python hub/machine.py free     exit 1, in one line, when a hub of these settings already runs (`make hub`)

The users' tree: the hub's users (their servers, kernels, nbgrader) run the course from a folder of this checkout's
own under /opt/attention-hub, named by a short id of the checkout's real path, so two checkouts on one machine never
run each other's code, and the checkout itself (solutions/, tests/, .git) stays closed to them.
"""
from __future__ import annotations

import errno
import hashlib
import os
import socket
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
TREES = Path("/opt/attention-hub")  # every checkout's users' tree, side by side
# the hub's settings and their defaults (hub/jupyterhub_config.py's docstring says what each is)
DEFAULTS = {"HUB_IP": "127.0.0.1", "HUB_PORT": "8000", "HUB_API_PORT": "8081", "HUB_PROXY_API_PORT": "8001",
            "HUB_STATE": "/var/lib/attention-hub/hub"}


def setting(name: str, default: str | None = None) -> str:
    return os.environ.get(name) or (default if default is not None else DEFAULTS[name])


def checkout_id(repo: Path = REPO) -> str:
    """A short id of the checkout's real path: the same checkout, however reached, the same id."""
    return hashlib.sha256(str(Path(repo).resolve()).encode()).hexdigest()[:12]


def users_tree(repo: Path = REPO) -> Path:
    """The folder the hub's users run the course from: python/ (the interpreter and packages), course/ (the
    course's code and configuration, nothing grader-only)."""
    return TREES / checkout_id(repo)


def _alive(pid_file: Path, name: str) -> int | None:
    """The pid in ``pid_file`` when that process runs and its command line names ``name``."""
    try:
        pid = int(pid_file.read_text().strip())
        return pid if name.encode() in Path(f"/proc/{pid}/cmdline").read_bytes() else None
    except (OSError, ValueError):
        return None


def _taken(ip: str, port: int) -> bool:
    """Whether something already listens on ``ip``:``port`` (a port in TIME_WAIT is free, as it is for the hub)."""
    with socket.socket() as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind((ip, port))
        except OSError as err:
            return err.errno == errno.EADDRINUSE
    return False


def already_running() -> str | None:
    """Why a hub of these settings cannot start now (one is running, or its ports are taken), or None."""
    state = Path(setting("HUB_STATE"))
    url = f"http://{setting('HUB_IP')}:{setting('HUB_PORT')}"
    hub = _alive(state / "jupyterhub.pid", "jupyterhub")
    if hub:
        return f"a hub is already running (pid {hub}, {url}): stop it first (Ctrl+C where it runs)"
    for name, ip in (("HUB_PORT", setting("HUB_IP")), ("HUB_API_PORT", "127.0.0.1"),
                     ("HUB_PROXY_API_PORT", "127.0.0.1")):
        if _taken(ip, int(setting(name))):
            proxy = _alive(state / "proxy.pid", "configurable-http-proxy")
            holder = f" (a proxy an earlier hub left, pid {proxy}?)" if proxy else ""
            return f"port {setting(name)} ({name}) is already in use{holder}: stop what listens there, or set {name}"
    return None


if __name__ == "__main__":
    if sys.argv[1:] == ["tree"]:
        print(users_tree())
    elif sys.argv[1:] == ["free"]:
        problem = already_running()
        if problem:
            print(f"make hub: {problem}", file=sys.stderr)
            sys.exit(1)
    else:
        sys.exit(__doc__)
