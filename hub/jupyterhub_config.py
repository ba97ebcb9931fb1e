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
import sys
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
STUDENT_PROCESSES = 1024  # processes and threads of a student's server, kernels included: no fork bomb takes the hub


def server_share(spawner):
    """A cgroup for a student's server: at most its spawner's cpu_limit CPUs and mem_limit bytes, and
    STUDENT_PROCESSES, for the server and everything it starts (kernels, their training); None where cgroups are not
    writable. It is the grader's kind (autograder.confinement.cgroups), under the same parent: sibling cgroups share
    the CPUs fairly under contention however many processes each runs, the course's training threads follow its
    quota (course_lib.gpt.cpu_share), and one a dead hub left empty is removed with the grader's orphans."""
    from autograder.confinement.cgroups import Cgroup, cgroup_layout
    from autograder.confinement.limits import Limits

    if cgroup_layout() is None:
        return None
    limits = Limits(memory_mb=int(spawner.mem_limit) // 2 ** 20, max_processes=STUDENT_PROCESSES,
                    cpus=spawner.cpu_limit)
    try:
        return Cgroup(limits)
    except OSError:
        return None


# --- how servers start ---
class CourseSpawner(LocalProcessSpawner):
    """LocalProcessSpawner that starts the server in its notebook_dir rather than the home folder, and a student's
    in a cgroup of its own (``server_share``: the spawner's cpu_limit and mem_limit, enforced).

    nbgrader reads the course's relative paths (its gradebook, "sqlite:///gradebook.db") against the working
    folder: in the home folder formgrader would open an empty gradebook there instead of the course's."""

    share = None  # the student server's cgroup while it runs

    def make_preexec_fn(self, name):
        become_user = super().make_preexec_fn(name)  # drops to the user and enters their home
        folder = self.notebook_dir
        self.share = server_share(self) if self.cpu_limit and self.mem_limit else None
        if self.cpu_limit and self.share is None:
            self.log.warning("no cgroup for %s's server (cgroups are not writable here): its CPU and memory limits "
                             "are not enforced", name)

        def preexec():
            if self.share is not None:
                self.share.enter()  # as root, before the server drops to its user: nothing it starts can leave
            become_user()
            if folder:
                os.chdir(folder)

        return preexec

    async def stop(self, now=False):
        await super().stop(now=now)
        if self.share is not None:
            self.share.kill()  # what the server left running (a kernel, its training), then the cgroup
            self.share = None


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
