"""nbgrader's grading kernel: ipykernel in a bubblewrap sandbox (``autograder.confinement``).

Started by jupyter_client from autograder/nbgrader_glue/jupyter/kernels/course-grading/kernel.json:
    python -m autograder.nbgrader_glue.kernel -f CONNECTION_FILE
The kernel is forked from the student's sandbox (``zygote``: bubblewrap, uid 65534, a cgroup of the
student's own). The kernel sees an allowlist (``kernel_sandbox``): the Python
environment and course_lib read-only, its working folder (the notebook's folder) as links to
its files, read-only, in a writable folder of the sandbox's own (a helper a cell writes stays in the
sandbox), the data and run-output folders read-only, the autograder files the hidden test cells import (never
solutions/), a private /tmp, and one private folder for its ZMQ sockets (``/run/grading-kernel``
inside; the socket paths the client connects to are symlinks into it). No network: the kernel
must use the ``ipc`` transport (unix sockets; ``configure_grading`` sets it), which crosses the
network namespace where TCP cannot.

The launcher stays as a small parent: it forwards jupyter's SIGINT (interrupt) and
SIGTERM to the kernel inside, and a reaper it forks kills the kernel and removes its
socket links when the launcher ends, even when jupyter kills it with SIGKILL.

Without confinement (no root, no bwrap) it refuses to start unless
GRADING_ALLOW_UNCONFINED=1; then it runs plain ipykernel with only rlimits.
Settings come from the environment nbgrader passes on (see ``setup.configure_grading``):
    GRADING_MEMORY_MB       memory: cgroup limit and address-space rlimit (default 4096)
    GRADING_CPU_SECONDS     CPU-time rlimit, behind nbgrader's per-cell timeout (default 1800)
    GRADING_READABLE_PATHS  os.pathsep-separated extra folders (or files) the kernel may read
                            (data folders, the hidden checks' inputs ``autograder autograde`` makes)
"""
from __future__ import annotations

import json
import os
import signal
import sys
from collections.abc import Callable
from pathlib import Path

from autograder.confinement import NOBODY, status
from autograder.confinement.isolation import die_with_parent, limit_resources
from autograder.nbgrader_glue.kernel_sandbox import INSIDE_SOCKETS
from course_lib.layout import REPO

SOCKET_KEYS = ("shell_port", "iopub_port", "stdin_port", "hb_port", "control_port")


def _say(message: str) -> None:
    """A line on stderr, where nbgrader's log shows it."""
    print(f"grading kernel: {message}", file=sys.stderr, flush=True)


def connection_path(argv: list[str]) -> Path:
    """The connection file after ``-f``, made absolute."""
    if "-f" not in argv or argv.index("-f") + 1 >= len(argv):
        raise SystemExit("grading kernel: no connection file (-f CONNECTION_FILE)")
    return Path(os.path.abspath(argv[argv.index("-f") + 1]))


def client_ip(ip: str) -> Path:
    """The client's socket path prefix: a relative one ("kernel-ipc") is in the client's folder."""
    try:
        client_cwd = os.readlink(f"/proc/{os.getppid()}/cwd")
    except OSError:
        client_cwd = os.getcwd()
    return Path(client_cwd, ip)


def link_sockets(ip: Path, info: dict, private: Path, links: list[Path]) -> None:
    """Point the client's socket paths (ip-PORT) at the private folder the kernel binds them in."""
    for key in SOCKET_KEYS:
        link = Path(f"{ip}-{info[key]}")
        link.symlink_to(private / link.name)
        links.append(link)


def start_reaper(cleanup: Callable[[], None]) -> int:
    """Fork a process that runs ``cleanup`` once this one has ended, however (even by SIGKILL).

    Returns the write end of a pipe that only this process holds: its end is the reaper's signal.
    """
    read_end, write_end = os.pipe()  # not inherited across exec: bwrap never holds it
    if os.fork() == 0:
        try:
            os.setsid()  # out of the kernel's process group, which jupyter signals as a whole
            os.close(write_end)
            null = os.open(os.devnull, os.O_RDWR)
            for fd in (0, 1, 2):
                os.dup2(null, fd)
            while os.read(read_end, 4096):
                pass
            cleanup()
        finally:
            os._exit(0)
    os.close(read_end)
    return write_end


def share_connection(info: dict, private: Path, links: list[Path], copy: Path) -> None:
    """Link jupyter's sockets into ``private`` (each link appended to ``links``) and write ``copy``:
    the kernel's connection file, readable by nobody only, with the sandbox's socket paths."""
    ip = client_ip(info["ip"])
    link_sockets(ip, info, private, links)
    text = json.dumps({**info, "ip": f"{INSIDE_SOCKETS}/{ip.name}"}, indent=1).encode()
    # the sandbox can write this folder (a process a submission left running): never follow or reuse
    # a file there; set owner and mode on the file this call created, not on a path
    copy.unlink(missing_ok=True)
    fd = os.open(copy, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    try:
        os.fchown(fd, NOBODY, NOBODY)
        os.fchmod(fd, 0o600)
        os.write(fd, text)
    finally:
        os.close(fd)


def run_forked(argv: list[str], connection: Path, info: dict, cwd: Path) -> int:
    """A kernel forked from the student's sandbox (``zygote``); returns its exit status."""
    from autograder.nbgrader_glue import zygote

    parent = int(os.environ.get("JPY_PARENT_PID") or os.getppid())
    sock, private = zygote.ensure(parent, cwd)
    links: list[Path] = []
    copy = private / connection.name

    kernel: list[int] = []  # its host pid once started: the reaper kills it if the launcher dies

    def cleanup() -> None:
        for pid in kernel:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        copy.unlink(missing_ok=True)
        for link in links:  # jupyter removes them itself unless it was killed first
            if link.is_symlink():
                link.unlink()

    try:
        share_connection(info, private, links, copy)
        request = zygote.KernelRequest(sock, f"{INSIDE_SOCKETS}/{connection.name}")
        kernel.append(request.pid)
    except BaseException:
        cleanup()
        raise
    start_reaper(cleanup)  # forked after the kernel started: it knows the pid to kill

    def forward(signum: int, _frame) -> None:
        request.signal(signum)

    signal.signal(signal.SIGINT, forward)  # jupyter interrupts a cell: SIGINT to our process group
    signal.signal(signal.SIGTERM, forward)
    _say(f"confined: forked from the student's sandbox (uid {NOBODY}, allowlist of {cwd} and the data folders, "
         "no network)")
    return request.wait()


def run_confined(argv: list[str]) -> int:
    """Run ipykernel in the sandbox; returns its exit status."""
    connection = connection_path(argv)
    info = json.loads(connection.read_text())
    if info.get("transport") != "ipc":
        _say("refusing to start: the kernel needs the ipc transport (c.KernelManager.transport = 'ipc', "
             "set by configure_grading); tcp cannot cross the sandbox's network namespace")
        return 2
    cwd = Path(os.getcwd()).resolve()
    if cwd == REPO or cwd in REPO.parents:
        _say(f"refusing to start in {cwd}: the kernel's working folder is readable by it, and this one holds the "
             "whole course (solutions, .git); start it in the notebook's own folder")
        return 2
    return run_forked(argv, connection, info, cwd)


def run_unconfined(argv: list[str], problem: str) -> None:
    """Plain ipykernel with rlimits only, if GRADING_ALLOW_UNCONFINED=1; else refuse to start."""
    if os.environ.get("GRADING_ALLOW_UNCONFINED") != "1":
        _say(f"refusing to start unconfined: {problem}. Set GRADING_ALLOW_UNCONFINED=1 to grade anyway "
             "(submission code then reads and writes whatever the grader can)")
        raise SystemExit(2)
    _say(f"WARNING: not confined ({problem}); only memory and CPU-time limits apply")
    connection = connection_path(argv)
    info = json.loads(connection.read_text())
    if info.get("transport") == "ipc" and not os.path.isabs(info["ip"]):
        # the client resolves "kernel-ipc" in its own folder, the kernel in the notebook's: absolute
        connection.write_text(json.dumps({**info, "ip": str(client_ip(info["ip"]))}, indent=1))
    limit_resources(int(os.environ.get("GRADING_MEMORY_MB", "4096")), int(os.environ.get("GRADING_CPU_SECONDS",
                                                                                         "1800")))
    os.execv(sys.executable, [sys.executable, "-m", "ipykernel_launcher", *argv])


def main(argv: list[str]) -> None:
    """Start the kernel confined, or unconfined only when allowed."""
    # jupyter's process gone (killed with its grading task): this one and its sandbox go too
    die_with_parent("JPY_PARENT_PID")  # jupyter_client names itself there
    problem = status()
    if problem is not None:
        run_unconfined(argv, problem)
        return
    sys.exit(run_confined(argv))


if __name__ == "__main__":
    main(sys.argv[1:])
