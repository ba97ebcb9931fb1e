"""Jobs started from a class-wide preloaded interpreter: a fresh sandbox each, without a fresh ``import torch``.

Every confined job used to start ``python -I`` in its own sandbox and import torch (and, at the first optimizer,
torch._dynamo) anew: about 2.2 CPU-s a job (``benchmarks/template_fork.py``); each student's kernel sandbox imported
ipykernel, torch, numpy and matplotlib anew, about 3.3. Here one *template* (``template_server``) imports them once,
as root, outside every sandbox, and holds nothing of any student's: one for the score of record's jobs (``PRELOAD``,
under ``-I``), one for nbgrader's kernel sandboxes (``zygote_server.template_preload``, under the flags of the
sandbox server's ``python -m``). A job's sandbox is still bubblewrap's, made by the same command line
(``sandbox.bwrap_argv``: the same mounts, namespaces, environment and setpriv), around a *holder*: ``sh`` waiting on a
pipe, uid 0 with no capability, which the job (nobody) cannot signal. The template forks a child that joins the
holder's cgroups (the job's own, and the grader's in the other hierarchies), enters the holder's namespaces, and forks
the job into them as nobody with no capabilities and the holder's rlimits; when the job ends, that child writes its
status to the holder's pipe, so bubblewrap ends with the job's status, as it did when it ran the job itself. What a
job sees is bubblewrap's own sandbox: ``tests/autograder/confinement/test_template.py`` and, for a kernel,
``tests/autograder/nbgrader_glue/test_kernel.py`` compare them item by item.

The template runs in a mount namespace of its own with an empty /tmp (the sandboxes' HOME and MPLCONFIGDIR): nothing
anyone left in the host's /tmp reaches its imports. It listens on a socket in a folder only root can reach (``ROOT``),
one per interpreter, preload, flags, environment and server file, so every grading process of a checkout shares it;
the first job that finds none starts it (under a lock; ``autograder grade`` and ``autograde`` start theirs as they
start, ``warm``), and it ends after ``IDLE_SECONDS`` without a job. Where it cannot start or answer, the job starts its
own interpreter as before and says so in its log. ``GRADING_FRESH_JOBS=1`` makes every job, and every kernel sandbox,
start its own (a comparison's other arm).
"""
from __future__ import annotations

import ctypes
import hashlib
import json
import os
import resource
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

from autograder.confinement.limits import Limits
from autograder.confinement.sandbox import Mounts, bwrap_argv, python_paths
from autograder.confinement.template_server import locked
from course_lib.layout import REPO

SERVER = Path(__file__).with_name("template_server.py")
ROOT = Path("/run/course-grading-templates")  # root only: each template's socket, lock and log
# every job's import torch; the first optimizer's torch._dynamo; the probe job's notebook reader and IPython's shell
# (0.1 CPU-s a student, imported before any file of the student's is read: their state at import is no student's)
PRELOAD = ("torch", "torch._dynamo", "nbformat", "IPython.core.interactiveshell")
# a template with no job this long ends; the next job starts another (about 2 CPU-s)
IDLE_SECONDS = float(os.environ.get("GRADING_TEMPLATE_IDLE_SECONDS", "120"))
READY_SECONDS = 120  # how long the first job waits for the template's imports
HOLDER_SECONDS = 20  # how long a job waits for bubblewrap to start its holder
FRESH_VARIABLE = "GRADING_FRESH_JOBS"  # "1": every job starts its own interpreter
CLONE_NEWNS, MS_BIND, MS_REC, MS_PRIVATE = 0x00020000, 0x1000, 0x4000, 1 << 18  # <sched.h>, <sys/mount.h>


class TemplateError(RuntimeError):
    """The template could not start or take this job: the job starts its own interpreter instead."""


def job_template(preload: tuple[str, ...] = PRELOAD, isolated: bool = True) -> Path:
    """The socket of the template jobs start from (every sandbox's own environment), started if none serves yet."""
    return ensure(sandbox_environment(bwrap_argv([], Mounts(), Limits())), preload, isolated)


def warm(preload: tuple[str, ...] = PRELOAD, isolated: bool = True) -> subprocess.Popen | None:
    """Start the template of ``preload`` and ``isolated`` now, in a process of its own, so that it imports torch while
    the command does its own start-up (on another core), not while its first jobs wait; None where jobs start no
    template. The process only calls ``job_template``: a template that cannot start is said by the first job, as
    before."""
    if not wanted():
        return None
    # this checkout's grader first on the path, as the command has it (-I: nothing of the working folder's or user's)
    code = (f"import sys; sys.path.insert(0, {str(REPO)!r})\n"
            f"from autograder.confinement.template import job_template; job_template({preload!r}, {isolated!r})")
    return subprocess.Popen([sys.executable, "-I", "-c", code], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, cwd="/")


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


def ensure(environment: dict[str, str], preload: tuple[str, ...] = PRELOAD, isolated: bool = True) -> Path:
    """The socket of the template for this interpreter, ``environment`` (the sandboxes' own), ``preload`` and flags
    (``isolated``: ``-I``, as the jobs' interpreter; else none, as the kernel server's ``python -m``), started if
    none serves yet; TemplateError if it cannot start."""
    server = hashlib.sha256(SERVER.read_bytes()).hexdigest()
    key = json.dumps([sys.executable, server, preload, isolated, sorted(environment.items())])
    key = hashlib.sha256(key.encode()).hexdigest()[:24]
    ROOT.mkdir(mode=0o700, exist_ok=True)
    os.chmod(ROOT, 0o700)
    sock = ROOT / f"{key}.sock"
    if connectable(sock, socket.SOCK_SEQPACKET):
        return sock
    with locked(ROOT / f"{key}.lock"):  # one template, whichever job is first
        if connectable(sock, socket.SOCK_SEQPACKET):
            return sock
        sock.unlink(missing_ok=True)
        flags = ["-I"] if isolated else []
        try:
            with open(ROOT / f"{key}.log", "ab") as log:
                process = subprocess.Popen([sys.executable, *flags, str(SERVER), str(sock), str(IDLE_SECONDS),
                                            *preload], stdin=subprocess.DEVNULL, stdout=log, stderr=log,
                                           env=environment, cwd="/", start_new_session=True,
                                           preexec_fn=_private_tmp(environment["TMPDIR"]))
        except (OSError, subprocess.SubprocessError) as err:
            raise TemplateError(f"the template did not start ({type(err).__name__}: {err})") from None
        deadline = time.monotonic() + READY_SECONDS
        while not connectable(sock, socket.SOCK_SEQPACKET):
            if process.poll() is not None or time.monotonic() > deadline:
                process.kill()
                raise TemplateError(f"the template did not start (see {ROOT / f'{key}.log'})")
            time.sleep(0.05)
    return sock


def _private_tmp(folder: str):
    """What the template's process does before its interpreter starts: a mount namespace of its own, with an empty
    tmpfs on ``folder`` (the sandboxes' /tmp, their HOME and MPLCONFIGDIR), so it reads nothing anyone left in the
    host's (a user site folder, a matplotlibrc, a font cache) and sees that folder as a new sandbox does. Its own
    interpreter's folders and this file's, should a checkout or its environment live under ``folder``, are bound back
    at their places."""
    libc = ctypes.CDLL(None, use_errno=True)  # loaded here: the forked child only calls it
    keep = sorted((path for path in {*python_paths(), str(SERVER.parent)} if path.startswith(folder.rstrip("/") + "/")),
                  key=len)  # outer folders first

    def check(result: int, what: str) -> None:
        if result != 0:
            raise OSError(ctypes.get_errno(), f"a private {folder} for the template: {what}")

    def enter() -> None:
        check(libc.unshare(CLONE_NEWNS), "unshare")
        check(libc.mount(b"none", b"/", None, MS_REC | MS_PRIVATE, None), "private mounts")
        # opened in the new namespace (a bind's source must be of it), before the tmpfs hides them
        kept = [(path, os.open(path, os.O_PATH)) for path in keep]
        check(libc.mount(b"tmpfs", folder.encode(), b"tmpfs", 0, b"mode=1777,size=64m"), "tmpfs")
        for path, fd in kept:
            os.makedirs(path, exist_ok=True)
            check(libc.mount(f"/proc/self/fd/{fd}".encode(), path.encode(), None, MS_BIND | MS_REC, None), path)
            os.close(fd)
    return enter


def sandbox_environment(bwrap_argv: list[str]) -> dict[str, str]:
    """The environment bubblewrap's command line gives the sandbox (its ``--setenv`` pairs)."""
    separator = bwrap_argv.index("--")
    return {bwrap_argv[i + 1]: bwrap_argv[i + 2] for i in range(separator) if bwrap_argv[i] == "--setenv"}


# what bubblewrap runs in the job's place: wait for the job's status on its standard input (the holder's pipe), end
# with it (125 when the pipe ends without one: the template's child died)
HOLDER_COMMAND = ["/bin/sh", "-c", 'read status; exit "${status:-125}"']


def holder_argv(sandbox_argv: list[str]) -> list[str]:
    """bubblewrap's command line for the holder, from the job's own up to its command (``sandbox.bwrap_argv`` of no
    command: it ends with setpriv's options): the same sandbox, but the holder keeps uid 0 (still with no capability),
    so no process of the job (nobody) can signal it and so end the sandbox under the job, as none could end
    bubblewrap's init."""
    separator = sandbox_argv.index("--")
    setpriv = sandbox_argv[separator + 1:]
    kept = [arg for arg in setpriv if not arg.startswith(("--reuid=", "--regid="))]
    return sandbox_argv[:separator + 1] + kept + HOLDER_COMMAND


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


def rlimits_of(pid: int) -> list[tuple[int, int, int]]:
    """Each rlimit of a process, (kind, soft, hard), as /proc shows it to anyone (prlimit on another user's process
    needs CAP_SYS_RESOURCE, which a container's root may lack); its rows are in the order of the kinds' numbers."""
    rows = Path(f"/proc/{pid}/limits").read_text().splitlines()[1:]

    def value(text: str) -> int:
        return resource.RLIM_INFINITY if text == "unlimited" else int(text)
    fields = [row[26:].split() for row in rows]  # past the name column: soft, hard, units
    return [(kind, value(soft), value(hard)) for kind, (soft, hard, *_) in enumerate(fields)]


def _umask() -> int:
    """This process's umask, read without setting it (another thread may be making a file meanwhile)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("Umask:"):
            return int(line.split()[1], 8)
    return 0o022


def start(sock: Path, holder: int, descriptors: dict[int, int], status_fd: int, argv: list[str],
          cwd: str, environment: dict[str, str], entry: str, restarts: int = 0) -> int:
    """Ask the template to start the job in the holder's sandbox: ``descriptors`` maps each number the job expects
    (1 and 2, the answer's, ...) to this process's descriptor; ``status_fd`` is the holder's pipe; the job takes the
    holder's rlimits, and one killed by a signal is started anew up to ``restarts`` times. The pid of the template's
    entering child; TemplateError if the template refused."""
    targets = list(descriptors)
    try:
        holder_fd = os.pidfd_open(holder)  # the holder itself, should its pid be reused before the template enters
    except OSError as err:
        raise TemplateError(f"the job's holder is gone ({type(err).__name__})") from None
    try:
        if Path(f"/proc/{holder}/comm").read_text().strip() != "sh":  # the pidfd is of the holder, not of a newcomer
            raise OSError("the holder ended")
        rlimits = rlimits_of(holder)  # what bubblewrap's exec would have kept
    except OSError as err:
        os.close(holder_fd)
        raise TemplateError(f"the job's holder is gone ({type(err).__name__})") from None
    request = {"holder": holder, "targets": targets, "argv": argv, "cwd": cwd, "env": environment, "umask": _umask(),
               "rlimits": rlimits, "entry": entry, "restarts": restarts}
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


def kill_group(proc: subprocess.Popen) -> None:
    """Kill a process started in a session of its own, with its group, and wait for it."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    proc.wait()


def start_in_sandbox(sandbox_argv: list[str], descriptors: dict[int, int], argv: list[str], entry: str, *,
                     output: int | None, preexec, cwd: str | None, env: dict[str, str] | None,
                     preload: tuple[str, ...] = PRELOAD, isolated: bool = True, restarts: int = 0) -> subprocess.Popen:
    """bubblewrap's sandbox of ``sandbox_argv`` (``sandbox.bwrap_argv`` of no command) started around a holder
    (``holder_argv``), and the job (``entry`` with ``argv``, its ``descriptors``) forked into it from the template of
    ``preload`` and ``isolated``, started with every sandbox's own environment (``bwrap_argv``'s, without the extras
    of this one): bubblewrap's process, which ends with the job's status. ``output``, ``preexec``, ``cwd`` and ``env``
    are bubblewrap's own, as for a job it starts itself. TemplateError (the holder's sandbox already ended) when the
    template cannot take the job."""
    holder_command = holder_argv(sandbox_argv)
    separator = sandbox_argv.index("--")
    chdir = sandbox_argv[sandbox_argv.index("--chdir", 0, separator) + 1]
    read_status, write_status = os.pipe()
    holder = None
    try:
        sock = job_template(preload, isolated)
        holder = subprocess.Popen(holder_command, stdin=read_status, stdout=output, stderr=output, cwd=cwd, env=env,
                                  preexec_fn=preexec, start_new_session=True)
        os.close(read_status)
        read_status = -1
        start(sock, holder_pid(holder), descriptors, write_status, argv, chdir, sandbox_environment(sandbox_argv),
              entry, restarts)
        return holder
    except TemplateError:
        if holder is not None:
            kill_group(holder)
        raise
    finally:
        os.close(write_status)
        if read_status != -1:
            os.close(read_status)
