"""The course's JupyterHub: `make hub` starts it (docs/hub.md); tests/hub starts one of its own.

Run as root (after tools/hub_setup.sh), it logs the machine's Linux users in with PAM and starts each one's
Jupyter server as that user; nbgrader's exchange carries assignments between them. One instructor, who gets the
course folder and formgrader; students, who get their home folder, the Assignments tab and Validate.

Settings come from the environment; the defaults are what `make hub` and tools/hub_setup.sh use:
    HUB_IP, HUB_PORT          where browsers reach the hub                 127.0.0.1, 8000
    HUB_API_PORT              the hub's own API, behind the proxy          8081
    HUB_PROXY_API_PORT        the proxy's control port                     8001
    HUB_STATE                 the hub's database and cookie secret         /var/lib/attention-hub/hub
    HUB_INSTRUCTOR            the instructor's user name                   instructor
    HUB_STUDENTS              the students' user names, space-separated    student1 student2
    HUB_EXCHANGE              nbgrader's exchange root                     /srv/nbgrader/exchange
    HUB_DATA                  the course world students read               /srv/attention-course/data
    COURSE_PRESET             the preset students train with (and graded)  cpu
    HUB_CPU_LIMIT             CPUs a student's server may use at most      2
    HUB_MEM_LIMIT             memory a student's server may use at most    4G
"""
from __future__ import annotations

import importlib.util
import os
import pwd
import re
import signal
import sys
import time
from pathlib import Path

from jupyterhub.spawner import LocalProcessSpawner

c = get_config()  # noqa: F821 (provided by JupyterHub)

HUB = Path(__file__).resolve().parent
REPO = HUB.parent


def _machine():
    """hub/machine.py, which tools/hub_users_python.sh and `make hub` use too (this file is run, not imported)."""
    spec = importlib.util.spec_from_file_location("attention_hub_machine", HUB / "machine.py")
    module = sys.modules[spec.name] = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


machine = _machine()
setting = machine.setting
# this checkout's users' tree (tools/hub_users_python.sh): the users run the course from there, never from REPO, which
# the setup closes to them (it holds solutions/, tests/, .git)
USERS_TREE = machine.users_tree(REPO)
USERS_PYTHON = str(USERS_TREE / "python" / "bin" / "python")
USERS_COURSE = USERS_TREE / "course"  # the copy of course_lib/, autograder/, hub/, student_jupyter/ they read
COURSE_FOLDER = "attention-course"  # in the instructor's home, made by tools/hub_setup.sh

INSTRUCTOR = setting("HUB_INSTRUCTOR", "instructor")
STUDENTS = setting("HUB_STUDENTS", "student1 student2").split()
STATE = Path(setting("HUB_STATE"))
STATE.mkdir(mode=0o700, parents=True, exist_ok=True)


def course_id() -> str:
    """The course id of the course's nbgrader_config.py: the exchange files everything under it."""
    text = (REPO / "nbgrader_config.py").read_text(encoding="utf-8")
    return re.search(r"""^c\.CourseDirectory\.course_id\s*=\s*["']([^"']+)["']""", text, re.M).group(1)


# --- where it listens ---
# browsers reach the proxy here; loopback by default: PAM passwords must not cross a network in clear text
# (put TLS in front, or set c.JupyterHub.ssl_cert/ssl_key, before serving other machines)
c.JupyterHub.bind_url = f"http://{setting('HUB_IP')}:{setting('HUB_PORT')}"
# the hub's API and the proxy's control port stay on loopback: only the hub, the proxy and the servers talk there
c.JupyterHub.hub_bind_url = f"http://127.0.0.1:{setting('HUB_API_PORT')}"
c.ConfigurableHTTPProxy.api_url = f"http://127.0.0.1:{setting('HUB_PROXY_API_PORT')}"
# the proxy from npm, pinned by hub/package-lock.json (tools/hub_setup.sh runs npm ci), not whatever is on PATH. It
# runs in a session of its own (JupyterHub's choice, so a restarted hub could keep it): Ctrl+C never reaches it, and a
# hub that dies before its clean-up would leave it running. The kernel ends it with its hub (setpriv --pdeathsig).
c.ConfigurableHTTPProxy.command = ["setpriv", "--pdeathsig", "TERM", "--",
                                   str(HUB / "node_modules" / ".bin" / "configurable-http-proxy")]

# --- the hub's own state, kept out of the repository and away from the users ---
c.JupyterHub.db_url = f"sqlite:///{STATE / 'jupyterhub.sqlite'}"
c.JupyterHub.cookie_secret_file = str(STATE / "jupyterhub_cookie_secret")
c.JupyterHub.pid_file = str(STATE / "jupyterhub.pid")
c.ConfigurableHTTPProxy.pid_file = str(STATE / "proxy.pid")  # its default is the working folder

# --- who logs in ---
# the machine's own accounts and passwords (tools/hub_setup.sh makes them): no second user database to keep
c.JupyterHub.authenticator_class = "pam"
# only the course's people, even though every Linux account could authenticate
c.Authenticator.allowed_users = {INSTRUCTOR, *STUDENTS}
# PAM sessions are off (JupyterHub's default since 2.2; their lifecycle is wrong): said here so nobody turns them on
# for a machine without a session manager
c.PAMAuthenticator.open_sessions = False
# nobody is a hub admin: the instructor grades through nbgrader's exchange, never by opening students' servers
c.Authenticator.admin_users = set()


# --- each student's share of the machine ---
STUDENT_CPUS = float(setting("HUB_CPU_LIMIT", "2"))  # a student alone trains as fast as on a 2-core laptop
STUDENT_MEMORY = setting("HUB_MEM_LIMIT", "4G")  # as JupyterHub writes sizes; room for a kernel's cpu-preset training
CGROUPS = Path("/sys/fs/cgroup")
SHARES = "attention-hub"  # the cgroup that holds each student server's cgroup


class ServerShare:
    """A student server's cgroup: at most ``cpus`` CPUs (cpu.max, or v1's cfs quota) and ``memory`` bytes
    (memory.max, or v1's limit), for the server and everything it starts (kernels, their training). Sibling cgroups
    share the CPUs fairly under contention, however many processes each runs; the course's training threads
    follow the quota (course_lib.gpt.cpu_share). Made by the hub (root) before the server starts; the server enters
    it before it drops to its user, so nothing it starts can leave; emptied and removed when the server stops."""

    def __init__(self, name: str, cpus: float, memory: int, root: Path = CGROUPS):
        self.name, self.cpus, self.memory, self.root = name, cpus, memory, root
        self.folders: list[Path] = []

    def _limits(self) -> list[tuple[Path, dict[str, str]]]:
        quota = str(int(self.cpus * 100_000))
        if (self.root / "cgroup.controllers").is_file():  # v2: one hierarchy, cpu and memory enabled down to it
            for parent in (self.root, self.root / SHARES):
                parent.mkdir(exist_ok=True)
                _write(parent / "cgroup.subtree_control", "+cpu +memory")
            return [(self.root / SHARES / self.name, {"cpu.max": f"{quota} 100000", "memory.max": str(self.memory),
                                                       "memory.swap.max": "0"})]
        return [(self.root / "cpu" / SHARES / self.name, {"cpu.cfs_period_us": "100000", "cpu.cfs_quota_us": quota}),
                (self.root / "memory" / SHARES / self.name, {"memory.limit_in_bytes": str(self.memory)})]

    def make(self) -> bool:
        """Make the cgroup and set its limits; False (nothing made) where cgroups are not writable."""
        try:
            for folder, limits in self._limits():
                folder.mkdir(parents=True, exist_ok=True)
                self.folders.append(folder)
                for name, value in limits.items():
                    _write(folder / name, value)
        except OSError:
            self.folders = []
        return bool(self.folders)

    def enter(self) -> None:
        """Put the calling process in the cgroup (the server, in its preexec, as root)."""
        for folder in self.folders:
            (folder / "cgroup.procs").write_text(str(os.getpid()))

    def remove(self) -> None:
        """Kill what the server left running in it (a kernel, its training), then remove it."""
        for _ in range(50):
            left = {int(p) for folder in self.folders for p in _read(folder / "cgroup.procs").split()}
            if not left:
                break
            for pid in left:
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            time.sleep(0.1)
        for folder in self.folders:
            try:
                folder.rmdir()
            except OSError:
                pass  # still busy, or gone: the next start of this server reuses it


def _write(path: Path, value: str) -> None:
    try:
        path.write_text(value)
    except OSError:
        pass  # a controller file this kernel lacks: the other limits still apply


def _read(path: Path) -> str:
    try:
        return path.read_text()
    except OSError:
        return ""


# --- how servers start ---
class CourseSpawner(LocalProcessSpawner):
    """LocalProcessSpawner that starts the server in its notebook_dir rather than the home folder, and a student's
    in a cgroup of its own (``ServerShare``: the spawner's cpu_limit and mem_limit, enforced).

    nbgrader reads the course's relative paths (its gradebook, "sqlite:///gradebook.db") against the working
    folder: in the home folder formgrader would open an empty gradebook there instead of the course's."""

    share: ServerShare | None = None

    def make_preexec_fn(self, name):
        become_user = super().make_preexec_fn(name)  # drops to the user and enters their home
        folder = self.notebook_dir
        self.share = None
        if self.cpu_limit or self.mem_limit:
            share = ServerShare(name, self.cpu_limit or os.cpu_count(), self.mem_limit or 2 ** 62)
            if share.make():
                self.share = share
            else:
                self.log.warning("no cgroup for %s's server (cgroups are not writable here): its CPU and memory "
                                 "limits are not enforced", name)

        def preexec():
            if self.share is not None:
                self.share.enter()
            become_user()
            if folder:
                os.chdir(folder)

        return preexec

    async def stop(self, now=False):
        await super().stop(now=now)
        if self.share is not None:
            self.share.remove()


def by_role(spawner) -> None:
    """The instructor's server opens the course folder with nbgrader's instructor tools; a student's their home."""
    name = spawner.user.name
    home = pwd.getpwnam(name).pw_dir
    role = "instructor" if name == INSTRUCTOR else "student"
    # hub/<role>/ holds that role's Jupyter and nbgrader config (which tools show, where the course and exchange are);
    # a student's server also reads student_jupyter/, `make student`'s config, which hub/student/ only adds to
    config_path = [USERS_COURSE / "hub" / role] + ([USERS_COURSE / "student_jupyter"] if role == "student" else [])
    environment = {**spawner.environment, "JUPYTER_CONFIG_PATH": os.pathsep.join(map(str, config_path))}
    if role == "instructor":
        # formgrader wants the course folder as the server's root, and the instructor works in it
        spawner.notebook_dir = environment["COURSE_ROOT"] = f"{home}/{COURSE_FOLDER}"
    else:
        # a student's share of the machine, enforced by CourseSpawner; JupyterHub passes it on as CPU_LIMIT and
        # MEM_LIMIT too (the instructor's server, which may grade, has none)
        spawner.cpu_limit, spawner.mem_limit = STUDENT_CPUS, STUDENT_MEMORY
    spawner.environment = environment


c.JupyterHub.spawner_class = CourseSpawner
# each user's server runs as that user (LocalProcessSpawner drops to their uid): files they write are theirs, and
# the exchange's permissions are what keep one student's work from another
c.Spawner.cmd = [USERS_PYTHON, "-m", "jupyterhub.singleuser"]
c.Spawner.pre_spawn_hook = by_role
c.Spawner.default_url = "/lab"
# two shared cores start a server in 5 to 20 s: the defaults (60 s, 30 s) leave too little margin under load
c.Spawner.start_timeout = 180
c.Spawner.http_timeout = 120
c.Spawner.environment = {
    # the users' Python first (its `alembic`, `nbgrader`, `jupyter`), then the system's
    "PATH": f"{Path(USERS_PYTHON).parent}:/usr/local/bin:/usr/bin:/bin",
    # hub/<role>/nbgrader_config.py reads these two: the course everything is filed under, and where the exchange is
    "COURSE_ID": course_id(),
    "COURSE_EXCHANGE": setting("HUB_EXCHANGE", "/srv/nbgrader/exchange"),
    # the course world every notebook reads (the default would write one into the read-only course repository)
    "COURSE_DATA_DIR": setting("HUB_DATA", "/srv/attention-course/data"),
    # the preset the course trains with: the grader decodes params with the same one, and Validate holds runs to it
    "COURSE_PRESET": setting("COURSE_PRESET", "cpu"),
    "COURSE_GRADED_PRESET": setting("COURSE_PRESET", "cpu"),
}
# JupyterHub would pass its own PATH and a few more from root's environment: everything a server needs is above
c.Spawner.env_keep = ["LANG", "LC_ALL"]
