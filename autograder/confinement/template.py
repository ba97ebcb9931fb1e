"""Jobs started from a class-wide preloaded interpreter: a fresh sandbox each, without a fresh ``import torch``.

Every confined job used to start ``python -I`` in its own sandbox and import torch (and, at the first optimizer,
torch._dynamo) anew: about 2.2 CPU-s a job (``benchmarks/template_fork.py``). Here one *template*
(``template_server``) imports them once, as root, outside every sandbox, and holds nothing of any student's. A job's
sandbox is still bubblewrap's, made by the same command line (``sandbox.bwrap_argv``: the same mounts, namespaces,
environment and setpriv), around a *holder*: ``sh`` waiting on a pipe. The template forks a child that joins the
holder's cgroups (the job's own, and the grader's in the other hierarchies), enters the holder's namespaces, and forks
the job into them as nobody with no capabilities; when the job ends, that child writes its status to the holder's pipe,
so bubblewrap ends with the job's status, as it did when it ran the job itself. What a job sees is bubblewrap's own
sandbox: ``tests/autograder/confinement/test_template.py`` compares them item by item.

The template listens on a socket in a folder only root can reach (``ROOT``), one per interpreter, preload and server
file, so every grading process of a checkout shares it; the first job that finds none starts it (under a lock), and it
ends after ``IDLE_SECONDS`` without a job. Where it cannot start or answer, the job starts its own interpreter as
before and says so in its log. ``GRADING_FRESH_JOBS=1`` makes every job start its own (a comparison's other arm).
"""
from __future__ import annotations

import fcntl
import hashlib
import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

SERVER = Path(__file__).with_name("template_server.py")
ROOT = Path("/run/course-grading-templates")  # root only: each template's socket, lock and log
PRELOAD = ("torch", "torch._dynamo")  # every job's import torch; the first optimizer's torch._dynamo
# a template with no job this long ends; the next job starts another (about 2 CPU-s)
IDLE_SECONDS = float(os.environ.get("GRADING_TEMPLATE_IDLE_SECONDS", "120"))
READY_SECONDS = 120  # how long the first job waits for the template's imports
HOLDER_SECONDS = 20  # how long a job waits for bubblewrap to start its holder
FRESH_VARIABLE = "GRADING_FRESH_JOBS"  # "1": every job starts its own interpreter


class TemplateError(RuntimeError):
    """The template could not start or take this job: the job starts its own interpreter instead."""


def wanted() -> bool:
    """Should confined jobs start from the template (root, Linux, not turned off)?"""
    return os.environ.get(FRESH_VARIABLE) != "1" and os.geteuid() == 0 and sys.platform == "linux"


def connectable(path: Path, kind: int = socket.SOCK_STREAM) -> bool:
    """Does a server listen on the unix socket at ``path`` (of ``kind``)? Also the student's sandbox supervisor's."""
    if not path.is_socket():
        return False
    probe = socket.socket(socket.AF_UNIX, kind)
    try:
        probe.connect(str(path))
        return True
    except OSError:
        return False
    finally:
        probe.close()


def ensure(environment: dict[str, str]) -> Path:
    """The socket of the template for this interpreter and ``environment`` (the sandboxes' own), started if none
    serves yet; TemplateError if it cannot start."""
    server = hashlib.sha256(SERVER.read_bytes()).hexdigest()
    key = hashlib.sha256(json.dumps([sys.executable, server, PRELOAD, sorted(environment.items())]).encode())
    key = key.hexdigest()[:24]
    ROOT.mkdir(mode=0o700, exist_ok=True)
    os.chmod(ROOT, 0o700)
    sock = ROOT / f"{key}.sock"
    if connectable(sock, socket.SOCK_SEQPACKET):
        return sock
    with open(ROOT / f"{key}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # one template, whichever job is first
        if connectable(sock, socket.SOCK_SEQPACKET):
            return sock
        sock.unlink(missing_ok=True)
        with open(ROOT / f"{key}.log", "ab") as log:
            process = subprocess.Popen([sys.executable, "-I", str(SERVER), str(sock), str(IDLE_SECONDS), *PRELOAD],
                                       stdin=subprocess.DEVNULL, stdout=log, stderr=log, env=environment, cwd="/",
                                       start_new_session=True)
        deadline = time.monotonic() + READY_SECONDS
        while not connectable(sock, socket.SOCK_SEQPACKET):
            if process.poll() is not None or time.monotonic() > deadline:
                process.kill()
                raise TemplateError(f"the template did not start (see {ROOT / f'{key}.log'})")
            time.sleep(0.05)
    return sock


def sandbox_environment(bwrap_argv: list[str]) -> dict[str, str]:
    """The environment bubblewrap's command line gives the sandbox (its ``--setenv`` pairs)."""
    separator = bwrap_argv.index("--")
    return {bwrap_argv[i + 1]: bwrap_argv[i + 2] for i in range(separator) if bwrap_argv[i] == "--setenv"}


# what bubblewrap runs in the job's place: wait for the job's status on its standard input (the holder's pipe), end
# with it (125 when the pipe ends without one: the template's child died)
HOLDER_COMMAND = ["/bin/sh", "-c", 'read status; exit "${status:-125}"']


def holder_pid(bwrap: subprocess.Popen) -> int:
    """The host pid of the holder (bubblewrap's child, the namespace's init, starts it), once it runs."""
    deadline = time.monotonic() + HOLDER_SECONDS
    while time.monotonic() < deadline and bwrap.poll() is None:
        try:
            init = Path(f"/proc/{bwrap.pid}/task/{bwrap.pid}/children").read_text().split()
            for pid in init:
                for holder in Path(f"/proc/{pid}/task/{pid}/children").read_text().split():
                    if Path(f"/proc/{holder}/comm").read_text().strip() == "sh":
                        return int(holder)
        except OSError:  # a process between two steps of its start
            pass
        time.sleep(0.005)
    raise TemplateError("bubblewrap did not start the job's holder")


def _umask() -> int:
    """This process's umask, read without setting it (another thread may be making a file meanwhile)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("Umask:"):
            return int(line.split()[1], 8)
    return 0o022


def start(sock: Path, holder: int, descriptors: dict[int, int], status_fd: int, argv: list[str],
          cwd: str, environment: dict[str, str], rlimits: list[tuple[int, int]], entry: str) -> int:
    """Ask the template to start the job in the holder's sandbox: ``descriptors`` maps each number the job expects
    (1 and 2, the answer's, ...) to this process's descriptor; ``status_fd`` is the holder's pipe. The pid of the
    template's entering child; TemplateError if the template refused."""
    targets = list(descriptors)
    try:
        holder_fd = os.pidfd_open(holder)  # the holder itself, should its pid be reused before the template enters
    except OSError as err:
        raise TemplateError(f"the job's holder is gone ({type(err).__name__})") from None
    try:
        if Path(f"/proc/{holder}/comm").read_text().strip() != "sh":  # the pidfd is of the holder, not of a newcomer
            raise OSError("the holder ended")
    except OSError as err:
        os.close(holder_fd)
        raise TemplateError(f"the job's holder is gone ({type(err).__name__})") from None
    request = {"holder": holder, "targets": targets, "argv": argv, "cwd": cwd, "env": environment, "umask": _umask(),
               "rlimits": rlimits, "entry": entry}
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    conn.settimeout(30)
    try:
        conn.connect(str(sock))
        socket.send_fds(conn, [json.dumps(request).encode()], [*descriptors.values(), holder_fd, status_fd])
        answer = json.loads(conn.recv(4096) or b"{}")
    except (OSError, ValueError) as err:
        raise TemplateError(f"the template did not answer ({type(err).__name__})") from None
    finally:
        conn.close()
        os.close(holder_fd)
    if "pid" not in answer:
        raise TemplateError(f"the template refused the job ({answer.get('error', 'no answer')})")
    return int(answer["pid"])
