"""A JupyterHub of the course's own config (hub/jupyterhub_config.py) for the tests: its users, start, stop.

The tests use users of their own (hubtest-*), made by tools/hub_setup.sh like `make hub`'s, so a test run never
touches a course that `make hub` serves on the same machine; and an exchange, state folder and ports of their own.
"""
from __future__ import annotations

import fcntl
import os
import pwd
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

from course_lib.layout import REPO

from .shapes import SHAPES


def _machine():
    """hub/machine.py (the users' tree of a checkout, whether a hub runs), loaded as hub/jupyterhub_config.py does."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("attention_hub_machine", REPO / "hub" / "machine.py")
    module = sys.modules.setdefault(spec.name, importlib.util.module_from_spec(spec))
    spec.loader.exec_module(module)
    return module


machine = _machine()
INSTRUCTOR = "hubtest-instructor"
STUDENTS = ("hubtest-ada", "hubtest-bo")
# students who attack the others through the exchange from their own shell (they never log in to the hub): eve writes
# in ada's name, mal makes a folder of her own submission unreadable, sy leaves a hand-made one without a secret
HOSTILE = ("hubtest-eve", "hubtest-mal", "hubtest-sy")
# students who hand in the same work in the shapes a term brings (a Windows editor's save, a renamed copy, ...), from
# their own shell (tests/hub/shapes.py)
SHAPED = tuple(SHAPES)
PASSWORDS = Path("/var/lib/attention-hub/passwords")  # written by tools/hub_setup.sh, root only
SETUP_LOCK = Path("/var/lib/attention-hub/setup.lock")  # tools/hub_setup.sh holds it while it sets the machine up
COURSE_FOLDER = "attention-course"  # in the instructor's home (tools/hub_setup.sh)
CHROMIUM = Path("/usr/bin/chromium")


def why_not() -> str | None:
    """Why the hub cannot run here, or None."""
    if sys.platform != "linux" or os.geteuid() != 0:
        return "the hub test runs as root on Linux (it creates Linux users and spawns servers as them)"
    for tool, package in (("npm", "npm"), ("node", "nodejs"), ("useradd", "passwd"), ("setpriv", "util-linux")):
        if shutil.which(tool) is None:
            return f"{tool} is missing (Debian: apt-get install {package}); make test installs what it can as root"
    if not CHROMIUM.is_file():
        return f"{CHROMIUM} is missing: apt-get install chromium (make test does it as root)"
    try:
        import jupyterhub  # noqa: F401
        import playwright.sync_api  # noqa: F401
    except ImportError as err:
        return f"{err.name} is not installed: pip install -e '.[dev,hub]'"
    return None


def set_up_machine() -> None:
    """tools/hub_setup.sh for the test users (made if missing): idempotent, a few seconds when everything is in
    place."""
    users = [INSTRUCTOR, *STUDENTS, *HOSTILE, *SHAPED]
    done = subprocess.run(["bash", "tools/hub_setup.sh", "--create", *users], cwd=REPO, capture_output=True, text=True,
                          timeout=900)
    if done.returncode:
        raise RuntimeError(f"tools/hub_setup.sh failed:\n{done.stdout[-2000:]}\n{done.stderr[-3000:]}")


def home(user: str) -> Path:
    return Path(pwd.getpwnam(user).pw_dir)


def course_folder() -> Path:
    return home(INSTRUCTOR) / COURSE_FOLDER


def forget_last_run() -> None:
    """Put the test users' homes back to /etc/skel: no fetched assignment, no nbgrader cache of past submissions,
    no JupyterLab workspace of open tabs (tools/hub_setup.sh then remakes the instructor's course folder). Under the
    setup's own lock: another test's setup may be making that course folder."""
    SETUP_LOCK.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    with SETUP_LOCK.open("a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        _back_to_skel()


def _back_to_skel() -> None:
    for user in (INSTRUCTOR, *STUDENTS, *HOSTILE, *SHAPED):
        try:
            folder = home(user)
        except KeyError:  # not made yet: tools/hub_setup.sh makes it
            continue
        for entry in folder.iterdir():
            shutil.rmtree(entry) if entry.is_dir() and not entry.is_symlink() else entry.unlink()
        shutil.copytree("/etc/skel", folder, dirs_exist_ok=True, symlinks=True)
        folder.chmod(0o700)  # copytree gave it /etc/skel's mode: private again, as tools/hub_setup.sh made it
        entry = pwd.getpwnam(user)
        for path in (folder, *folder.rglob("*")):
            os.lchown(path, entry.pw_uid, entry.pw_gid)


def trim_course(keep: tuple[str, ...]) -> None:
    """Leave only the notebooks ``keep`` in the test course's assignment (source and release)."""
    for folder in ("solutions", "notebooks"):
        for notebook in (course_folder() / folder / "a5").glob("*.ipynb"):
            if notebook.name not in keep:
                notebook.unlink()


def configure_course(lines: str) -> None:
    """Add ``lines`` to the test course folder's nbgrader_config.py (before any server reads it: formgrader reads it
    once, when the instructor's server starts)."""
    with open(course_folder() / "nbgrader_config.py", "a", encoding="utf-8") as f:
        f.write("\n" + lines)


def passwords() -> dict[str, str]:
    pairs = (line.split(" ", 1) for line in PASSWORDS.read_text().splitlines() if line.strip())
    return {user: password for user, password in pairs}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class Hub:
    """A running hub: its URL, exchange, log; stop() ends it, its proxy and every server it spawned."""
    url: str
    exchange: Path
    state: Path
    log: Path
    process: subprocess.Popen
    command: list[str]  # what started it (`make hub` or jupyterhub), with ``env``: to start another the same way
    env: dict[str, str]
    users: tuple[str, ...] = field(default=(INSTRUCTOR, *STUDENTS))

    def proxy_pid(self) -> int:
        return int((self.state / "proxy.pid").read_text())

    def interrupt(self) -> None:
        """Ctrl+C in the hub's terminal: SIGINT to its foreground process group (make and jupyterhub)."""
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGINT)
            self.process.wait(timeout=60)

    def stop(self) -> None:
        # SIGTERM (SIGINT through make): JupyterHub stops the servers it spawned and the proxy, then exits
        if self.process.poll() is None:
            try:
                if self.command[0] == "make":
                    self.interrupt()
                else:
                    self.process.send_signal(signal.SIGTERM)
                    self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)  # the hub and what runs in its session
                self.process.wait()
        _end_processes_of(self.users)  # a server the hub could not stop runs in a session of its own
        shutil.rmtree(self.exchange, ignore_errors=True)
        shutil.rmtree(self.state, ignore_errors=True)


def _end_processes_of(users) -> None:
    """SIGKILL, by pid, every process still running as one of the test's own users (servers, kernels)."""
    uids = {pwd.getpwnam(user).pw_uid for user in users}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if entry.stat().st_uid in uids:
                    os.kill(int(entry.name), signal.SIGKILL)
            except (FileNotFoundError, ProcessLookupError):
                continue


def start_hub(log: Path, preset: str = "smoke", make: bool = False) -> Hub:
    """Start `python -m jupyterhub -f hub/jupyterhub_config.py` as `make hub` does (or `make hub` itself, which
    runs tools/hub_setup.sh first), for the test users, on free ports with a fresh exchange and state folder; returns
    once the hub answers."""
    # under /tmp, not pytest's root-only folder: every user must reach the exchange
    exchange = Path(tempfile.mkdtemp(prefix="hubtest-exchange-"))
    exchange.chmod(0o1777)
    state = Path(tempfile.mkdtemp(prefix="hubtest-state-"))
    port = _free_port()
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("JUPYTER", "NBGRADER", "COURSE_", "PYTEST_", "MAKE", "MFLAGS"))}
    env.update(HUB_PORT=str(port), HUB_API_PORT=str(_free_port()), HUB_PROXY_API_PORT=str(_free_port()),
               HUB_STATE=str(state), HUB_EXCHANGE=str(exchange), COURSE_PRESET=preset)
    if make:
        command = ["make", "--no-print-directory", "hub", f"HUB_INSTRUCTOR={INSTRUCTOR}",
                   f"HUB_STUDENTS={' '.join(STUDENTS)}"]
    else:
        command = [sys.executable, "-m", "jupyterhub", "-f", str(REPO / "hub" / "jupyterhub_config.py")]
        env.update(HUB_INSTRUCTOR=INSTRUCTOR, HUB_STUDENTS=" ".join(STUDENTS))
    log.parent.mkdir(parents=True, exist_ok=True)
    with log.open("w") as out:
        process = subprocess.Popen(command, cwd=REPO if make else state, env=env, stdout=out,
                                   stderr=subprocess.STDOUT, start_new_session=True)
    hub = Hub(f"http://127.0.0.1:{port}", exchange, state, log, process, command, env)
    seconds = 240 if make else 60  # make hub runs the setup first
    deadline = time.monotonic() + seconds
    while True:
        if process.poll() is not None:
            hub.stop()
            raise RuntimeError(f"{command[0]} exited ({process.returncode}):\n{log.read_text()[-3000:]}")
        try:
            with urllib.request.urlopen(f"{hub.url}/hub/login", timeout=2):
                return hub
        except OSError:
            if time.monotonic() > deadline:
                hub.stop()
                raise RuntimeError(f"the hub did not answer in {seconds} s:\n{log.read_text()[-3000:]}")
            time.sleep(0.3)
