"""One sandbox per student, a fresh kernel per notebook forked from it: one start-up per student.

nbgrader starts a kernel per notebook; a confined kernel of its own would pay each time for a
new sandbox, a new Python, ipykernel and torch. Here the first kernel launcher of a student
(``autograder.nbgrader_glue.kernel``) starts a *supervisor*: a root process outside the sandbox
that makes the student's cgroup and the sandbox (``kernel_sandbox``'s allowlist, limits and uid)
and runs the fork server (``zygote_server``) in it, which preloads the heavy modules once. The server is forked
into the sandbox from the class's kernel template (``autograder.confinement.template``: bubblewrap's sandbox around
a holder, the same command line otherwise), which imported ipykernel, torch, numpy and matplotlib once for every
student, so a student's sandbox imports only course_lib; should the template not serve, bubblewrap runs the server
as the sandbox's init, importing everything itself. Every launcher of that student then asks the supervisor's
socket for a kernel; each kernel is a process forked from the server, so no notebook shares a namespace with
another, only the preloaded imports. The launcher follows its kernel by the kernel's own process (found in the
student's cgroup). A notebook may kill the server (same uid; as init it could not): the template then forks a new
one into the same sandbox, while the kernel that did it goes on; should the sandbox end all the same, the supervisor
starts a new one for the next notebook.

The supervisor's listening socket lives in a folder only root can reach (``ROOT``): the
sandbox inherits the listening descriptor and cannot replace the socket. A student is the
pair (nbgrader's process, the notebook folder): the supervisor ends, killing its cgroup,
when that nbgrader process ends, when the server has been idle for ``IDLE_SECONDS``, or
when the server dies.
"""
from __future__ import annotations

import fcntl
import hashlib
import json
import os
import select
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

from autograder.confinement.template import connectable
from autograder.nbgrader_glue.zygote_server import AUTOGRADE, template_preload
from course_lib.notebook.plots_off import OFF_ENV

ROOT = Path("/run/course-grading-zygotes")  # root only: one folder per student's supervisor
# a server with no kernel this long ends (nbgrader starts the next notebook at once); tests set less
IDLE_SECONDS = float(os.environ.get("GRADING_ZYGOTE_IDLE_SECONDS", "30"))
READY_SECONDS = 120  # how long a launcher waits for a new server's imports
MAX_SERVERS = 20  # servers a student's notebooks may kill before the supervisor gives up
MAX_MESSAGE = 64 * 1024  # bytes of one line from the sandboxed server (its lines are a few dozen)
# autograder files mounted for the server, beside kernel_sandbox's
SERVER_FILES = ("__init__.py", "nbgrader_glue/__init__.py", "nbgrader_glue/zygote_server.py")
# how many notebooks the student handed in, set by one_student for the kernels nbgrader starts
NOTEBOOKS_VARIABLE = "GRADING_NOTEBOOKS"
# where the notebook folder's own files are seen in the sandbox, whose working folder holds links to them
LINKED_SOURCE_VARIABLE = "GRADING_LINKED_SOURCE"
# what nbgrader's autograde kernels are told beside PASSED_ENV: the course's plots draw nothing, as in the score of
# record's probe job (course_lib.notebook.plots: a cell goes on with the stand-in they return). An autograded notebook
# never kept a figure, and drawing them was a fifth of its kernels' CPU (py-spy, issue 50 item 8)
AUTOGRADE_ENV = dict(OFF_ENV)
# the server's start when forked from the kernel template: what ``python -m autograder.nbgrader_glue.zygote_server``
# does (the working folder first on the import path, the module run as __main__)
SERVER_ENTRY = ("import os, runpy, sys\nsys.path.insert(0, os.getcwd())\n"
                "runpy._run_module_as_main('autograder.nbgrader_glue.zygote_server')\n")


def autograding() -> bool:
    """Is this nbgrader's autograde (no check runs in its kernels), not Validate?"""
    return os.environ.get("NBGRADER_EXECUTION") == AUTOGRADE


def server_arguments(listen_fd: int) -> list[str]:
    """The fork server's arguments: ``lean`` for a student of one notebook (one kernel: what only
    some notebooks import is left to it), ``autograde`` under nbgrader's autograde (what only the public checks
    and the plots import, torch._dynamo and pyplot, is left to the kernel that imports it), else every preload."""
    lean = ["lean"] if os.environ.get(NOTEBOOKS_VARIABLE) == "1" else []
    return [str(listen_fd), str(IDLE_SECONDS), *lean, *([AUTOGRADE] if autograding() else [])]


def student_folder(parent_pid: int, cwd: Path) -> Path:
    """The supervisor's folder of this nbgrader process and notebook folder."""
    key = hashlib.sha256(f"{parent_pid}\0{cwd}".encode()).hexdigest()[:24]
    return ROOT / key


def ensure(parent_pid: int, cwd: Path) -> tuple[Path, Path]:
    """(the supervisor's socket, the sandbox's private folder) for this student, starting the
    supervisor if none serves yet; RuntimeError if it cannot start."""
    ROOT.mkdir(mode=0o700, exist_ok=True)
    os.chmod(ROOT, 0o700)
    folder = student_folder(parent_pid, cwd)
    with open(f"{folder}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # one supervisor per student, whichever launcher is first
        sock = folder / "zygote.sock"
        if not connectable(sock):
            shutil.rmtree(folder, ignore_errors=True)
            folder.mkdir(mode=0o700)
            log = open(folder / "supervisor.log", "wb")
            process = subprocess.Popen([sys.executable, "-m", "autograder.nbgrader_glue.zygote", str(parent_pid),
                                        str(cwd), str(folder)], stdin=subprocess.DEVNULL, stdout=log, stderr=log,
                                       start_new_session=True, cwd="/")
            deadline = time.monotonic() + READY_SECONDS
            while not (folder / "ready").exists():
                if process.poll() is not None or time.monotonic() > deadline:
                    log = (folder / "supervisor.log").read_text()[-500:]
                    raise RuntimeError(f"the student's sandbox did not start ({log})")
                time.sleep(0.05)
    return sock, folder / "private"


def host_pid(folder: Path, inner_pid: int) -> int | None:
    """The host pid of the student's process that is ``inner_pid`` in its sandbox (found in the
    student's cgroups, whose folders the supervisor wrote down), or None."""
    try:
        cgroups = [Path(line) for line in (folder / "cgroups").read_text().splitlines() if line]
    except OSError:
        return None
    for cgroup in cgroups:
        try:
            pids = [int(p) for p in (cgroup / "cgroup.procs").read_text().split()]
        except OSError:
            continue
        for pid in pids:
            try:
                status = Path(f"/proc/{pid}/status").read_text()
            except OSError:
                continue
            ids = next((line.split()[1:] for line in status.splitlines() if line.startswith("NSpid:")), [])
            if len(ids) >= 2 and ids[-1] == str(inner_pid):
                return pid
    return None


class KernelRequest:
    """A kernel started by the student's server, then followed by its own process: signals go to
    it, its end is the launcher's end, whatever becomes of the server."""

    def __init__(self, sock: Path, connection_file: str):
        self.conn = socket.socket(socket.AF_UNIX)
        # a server a notebook stopped (it may: not the sandbox's init) fails this launcher, never hangs it
        self.conn.settimeout(READY_SECONDS)
        self.buffer = b""
        try:
            self.conn.connect(str(sock))
            self.send({"start": connection_file})
            answer = self.receive()
        except TimeoutError:
            raise RuntimeError(f"the student's sandbox did not answer in {READY_SECONDS} s") from None
        self.conn.settimeout(None)
        inner = answer.get("pid") if isinstance(answer, dict) else None
        self.pid = host_pid(sock.parent, inner) if isinstance(inner, int) else None
        if self.pid is None:
            raise RuntimeError("the student's sandbox did not start a kernel")
        self.pidfd = os.pidfd_open(self.pid)

    def send(self, message: dict) -> None:
        """One JSON line to the server."""
        self.conn.sendall(json.dumps(message).encode() + b"\n")

    def receive(self) -> dict | None:
        """The server's next JSON line, or None (closed, malformed or past MAX_MESSAGE)."""
        while b"\n" not in self.buffer:
            try:
                data = self.conn.recv(4096)
            except InterruptedError:
                continue
            # closed, or a line no server of ours writes
            if not data or len(self.buffer) + len(data) > MAX_MESSAGE:
                return None
            self.buffer += data
        line, self.buffer = self.buffer.split(b"\n", 1)
        try:
            return json.loads(line)
        except ValueError:
            return None

    def signal(self, signum: int) -> None:
        """Pass a signal to the kernel."""
        try:
            os.kill(self.pid, signum)  # only ever a process of the student's own cgroup
        except ProcessLookupError:
            pass

    def wait(self) -> int:
        """Wait for the kernel: its exit status if the server reports it, else 0 (not our child)."""
        while True:
            try:
                ready, _, _ = select.select([self.pidfd, self.conn], [], [])
            except InterruptedError:
                continue
            if self.conn in ready:
                answer = self.receive()
                if answer is None:  # the server is gone; the kernel may still run: follow it alone
                    select.select([self.pidfd], [], [])
                    return 0
                if isinstance(answer.get("exit"), int):
                    return answer["exit"]
            if self.pidfd in ready:
                return 0


# --- the supervisor ---------------------------------------------------------------------------


def supervise(parent_pid: int, cwd: Path, folder: Path) -> None:
    """Make the student's cgroup and sandbox, run the fork server there; end all with nbgrader."""
    from autograder.confinement import NOBODY, Cgroup, bwrap_argv, template
    from autograder.confinement.isolation import limit_resources
    from autograder.confinement.sandbox import linked_sources
    from autograder.nbgrader_glue.kernel_sandbox import (
        INSIDE_SOCKETS,
        PASSED_ENV,
        kernel_mounts,
        limits_from_env,
    )
    from course_lib.layout import REPO

    try:
        parent = os.pidfd_open(parent_pid)
    except ProcessLookupError:
        return
    private = folder / "private"
    private.mkdir(mode=0o700)
    os.chown(private, NOBODY, NOBODY)
    listener = socket.socket(socket.AF_UNIX)
    listener.bind(str(folder / "zygote.sock"))
    listener.listen(16)
    limits = limits_from_env()
    cgroup = Cgroup(limits)
    mounts = kernel_mounts(cwd, private)
    for name in SERVER_FILES:
        path = REPO / "autograder" / name
        mounts.read_only[str(path)] = str(path)
    env = {key: os.environ[key] for key in PASSED_ENV if key in os.environ}
    if autograding():  # nbgrader's autograde shows no figure (its notebooks keep text): the course's plots draw nothing
        env.update(AUTOGRADE_ENV)
    env[LINKED_SOURCE_VARIABLE] = linked_sources(mounts)[str(cwd)]  # where the server finds nbgrader's new files
    arguments = server_arguments(listener.fileno())
    command = bwrap_argv([sys.executable, "-m", "autograder.nbgrader_glue.zygote_server", *arguments], mounts,
                         limits, chdir=str(cwd), env=env, as_pid_1=True)
    # the listening socket stays open here too: a server a notebook killed is replaced on it
    cpu_seconds = int(os.environ.get("GRADING_CPU_SECONDS", "1800"))

    def enter() -> None:  # in the child before exec: sandbox, server and every kernel in the cgroup
        import resource

        cgroup.enter()
        limit_resources(limits.memory_mb, cpu_seconds)
        resource.setrlimit(resource.RLIMIT_NOFILE, (limits.open_files, limits.open_files))

    (folder / "cgroups").write_text("".join(f"{f}\n" for f in cgroup.folders))
    servers = []
    try:
        for _ in range(MAX_SERVERS):
            server = None
            if template.wanted():
                try:  # the server forked from the class's kernel template into a sandbox of the same making
                    server = template.start_in_sandbox(
                        bwrap_argv([], mounts, limits, chdir=str(cwd), env=env),
                        {listener.fileno(): listener.fileno(), 1: 1, 2: 2}, arguments, SERVER_ENTRY, output=None,
                        preexec=enter, cwd=None, env=None, preload=template_preload(autograding()), isolated=False,
                        restarts=MAX_SERVERS)
                except template.TemplateError as err:
                    print(f"[grader] the student's sandbox starts its own interpreter: {err}", file=sys.stderr,
                          flush=True)
            if server is None:
                server = subprocess.Popen(command, preexec_fn=enter, pass_fds=(listener.fileno(),),
                                          start_new_session=True)
            servers.append(server)
            (folder / "ready").write_text(str(INSIDE_SOCKETS))
            server_fd = os.pidfd_open(server.pid)
            # until nbgrader's process or the server ends
            ready, _, _ = select.select([parent, server_fd], [], [])
            if parent in ready or server.wait() == 0:  # nbgrader is done, or the server idled out
                break
            # the server was killed (a notebook may: same uid): a new one for the next notebook
    finally:
        listener.close()
        cgroup.kill()
        for server in servers:
            server.wait()
        shutil.rmtree(folder, ignore_errors=True)
        Path(f"{folder}.lock").unlink(missing_ok=True)


if __name__ == "__main__":
    supervise(int(sys.argv[1]), Path(sys.argv[2]), Path(sys.argv[3]))
