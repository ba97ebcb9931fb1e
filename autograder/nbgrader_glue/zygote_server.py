"""The fork server in a student's grading sandbox: heavy imports once, a fresh kernel per notebook.

    python -m autograder.nbgrader_glue.zygote_server LISTEN_FD IDLE_SECONDS [lean] [autograde]

Started by ``autograder.nbgrader_glue.zygote`` (outside, as root) in the sandbox every kernel of
one student runs in: forked there from the class's kernel template (``autograder.confinement.template``), which
imported all but course_lib once for the class, or, where the template cannot serve, run by bubblewrap as the
sandbox's init. It imports ipykernel, torch, numpy, matplotlib and course_lib once (what the template imported costs
nothing here), then accepts requests on the listening socket it inherits (created outside the sandbox, in a folder
only root can reach). Each request is one JSON line: ``{"start": CONNECTION_FILE}`` forks a
kernel (a process of its own: a namespace no other notebook touched, only the imports shared)
and answers ``{"pid": N}``; ``{"signal": S}`` passes an interrupt on to it; when the kernel
ends the answer is ``{"exit": STATUS}``; when the requester's connection closes first the
kernel is killed. With no kernel and no request for IDLE_SECONDS it exits. ``lean`` (a student
who handed in one notebook: one kernel) leaves out the imports only some notebooks need; ``autograde`` (nbgrader's
autograde, where no check runs in the kernel and the course's plots draw nothing) those only the public checks and the
plots need.
Imports only the standard library here (this file is mounted into the sandbox by itself).
"""
from __future__ import annotations

import json
import os
import selectors
import signal
import socket
import sys
import time

PRELOAD = ("ipykernel.kernelapp", "ipykernel.ipkernel", "IPython", "numpy", "torch", "torch.nn", "matplotlib.pyplot",
           "nbformat", "course_lib", "course_lib.gpt.model", "course_lib.gpt.trainer", "course_lib.checks",
           "course_lib.checks.twins", "course_lib.notebook.env", "course_lib.notebook.plots", "tqdm.auto",
           # ipykernel's start imports (debugger, psutil, sqlite3 for history, tornado queues);
           # none starts a thread on import, so forking after them is safe
           "ipykernel.debugger", "psutil", "sqlite3", "tornado.gen", "tornado.locks", "tornado.queues",
           "IPython.extensions", "cProfile", "pstats", "pydoc", "faulthandler", "pdb",
           # imported by torch's first optimizer (wrapped in torch._compile); starts no thread
           "torch._dynamo")
# only some notebooks import these (a training step's torch._dynamo; pyplot, never drawn here):
# worth preloading for a student's several kernels, not for one kernel that may never need them
SOME_NOTEBOOKS = ("matplotlib.pyplot", "torch._dynamo")
# left out under nbgrader's autograde, where no check runs in the kernel (the course's grader judges them) and the
# course's plots draw nothing (zygote.AUTOGRADE_ENV): torch._dynamo, imported by Validate's public checks of 02 and 04,
# which train a few steps; pyplot. A student's own training cell or pyplot import imports them itself
NOT_UNDER_AUTOGRADE = ("torch._dynamo", "matplotlib.pyplot")
AUTOGRADE = "autograde"  # the server's argument, and NBGRADER_EXECUTION's value, for nbgrader's autograde


def preload_names(lean: bool = False, autograde: bool = False) -> tuple[str, ...]:
    """What the fork server imports (``lean``: only what every notebook imports; ``autograde``: not what only the
    public checks and the plots need)."""
    return tuple(name for name in PRELOAD
                 if not (lean and name in SOME_NOTEBOOKS) and not (autograde and name in NOT_UNDER_AUTOGRADE))


def template_preload(autograde: bool = False) -> tuple[str, ...]:
    """What the class's kernel template (``autograder.confinement.template``) imports once for every student's
    sandbox: all but the course's own modules, whose state at import (the working folder, the COURSE_* settings) is
    the sandbox's. The template of nbgrader's autograde is another than Validate's (a template's key holds its
    preload)."""
    return tuple(name for name in preload_names(autograde=autograde) if not name.startswith("course_lib"))


def preload(lean: bool = False, autograde: bool = False) -> int:
    """Import what notebooks' first cells import, so each kernel starts with it done (``preload_names``); how many
    modules that was."""
    import importlib

    names = preload_names(lean, autograde)
    for name in names:
        try:
            importlib.import_module(name)
        except Exception as err:  # a kernel would meet the same error itself; the server goes on
            print(f"zygote: could not preload {name}: {type(err).__name__}", file=sys.stderr, flush=True)
    return len(names)


def run_kernel(connection_file: str) -> None:
    """In the forked child: become an ipykernel on ``connection_file``, then end."""
    signal.set_wakeup_fd(-1)  # the server's; the kernel's own event loop sets what it needs
    # output reaches nbgrader over the kernel's channels; its echo on fd 1 and 2 (ipykernel copies
    # fd-level writes there) must not fill the supervisor's log, a file on the host's /run
    null = os.open(os.devnull, os.O_WRONLY)
    os.dup2(null, 1)
    os.dup2(null, 2)
    os.close(null)
    for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGCHLD):
        signal.signal(signum, signal.SIG_DFL)
    code = 0
    try:
        from ipykernel import kernelapp

        sys.argv = ["ipykernel_launcher", "-f", connection_file]
        kernelapp.launch_new_instance(argv=["-f", connection_file])
    except SystemExit as done:
        code = done.code if isinstance(done.code, int) else 0
    except BaseException:  # noqa: BLE001 (the kernel's own failure: its status says so)
        code = 1
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)


def link_new_files(source: str | None) -> None:
    """Link into the working folder each file nbgrader put in the notebook's folder since the sandbox started (the
    notebooks it autogrades one after another: a training cell loads the earlier ones), so each kernel starts on the
    folder as it is then; a file a kernel wrote there keeps its place."""
    if not source or not os.path.isdir(source):
        return
    for name in os.listdir(source):
        if not os.path.lexists(name):
            try:
                os.symlink(os.path.join(source, name), name)
            except OSError:  # written by a kernel meanwhile: the kernel's stays
                pass


def strays() -> bool:
    """Does a process run here that a killed server left (a kernel that killed it goes on)? Only where this server is
    not the sandbox's init (forked from the template): such a process is then a child of bubblewrap's init, beside
    the holder; where it is the init, they are this server's own children."""
    if os.getpid() == 1:
        return False
    children_of_init = 0
    for name in os.listdir("/proc"):
        try:
            with open(f"/proc/{name}/stat") as stat:
                children_of_init += stat.read().rsplit(")", 1)[1].split()[1] == "1"
        except (OSError, IndexError):  # not a process, or one that ended meanwhile
            continue
    return children_of_init > 1


class Server:
    """Requests on the inherited listening socket; one kernel per connection."""

    def __init__(self, listener: socket.socket, idle_seconds: float):
        self.listener, self.idle_seconds = listener, idle_seconds
        self.selector = selectors.DefaultSelector()
        self.kernels: dict[socket.socket, int] = {}  # connection -> its kernel's pid
        self.buffers: dict[socket.socket, bytes] = {}
        self.last_activity = time.monotonic()
        self.wakeup_read, self.wakeup_write = os.pipe()
        os.set_blocking(self.wakeup_write, False)
        signal.set_wakeup_fd(self.wakeup_write)
        signal.signal(signal.SIGCHLD, lambda *_: None)  # wakes the selector through the wakeup fd
        self.selector.register(listener, selectors.EVENT_READ, "accept")
        self.selector.register(self.wakeup_read, selectors.EVENT_READ, "wakeup")

    def send(self, conn: socket.socket, message: dict) -> None:
        """One JSON line to a requester (gone: nothing)."""
        try:
            conn.sendall(json.dumps(message).encode() + b"\n")
        except OSError:
            pass

    def close(self, conn: socket.socket) -> None:
        """Drop a connection, killing its kernel."""
        pid = self.kernels.pop(conn, None)
        if pid is not None:
            try:
                os.kill(pid, signal.SIGKILL)  # its requester is gone: nobody may use it any more
            except ProcessLookupError:
                pass
        self.buffers.pop(conn, None)
        self.selector.unregister(conn)
        conn.close()

    def request(self, conn: socket.socket, message: dict) -> None:
        """Start a kernel (once per connection) or pass it a signal."""
        if isinstance(message.get("start"), str) and conn not in self.kernels:
            link_new_files(os.environ.get("GRADING_LINKED_SOURCE"))
            pid = os.fork()
            if pid == 0:
                self.listener.close()
                for other in list(self.kernels) + list(self.buffers):
                    other.close()
                run_kernel(message["start"])
            self.kernels[conn] = pid
            self.send(conn, {"pid": pid})
        elif isinstance(message.get("signal"), int) and conn in self.kernels:
            try:
                os.kill(self.kernels[conn], message["signal"])
            except ProcessLookupError:
                pass

    def read(self, conn: socket.socket) -> None:
        """Read a connection's JSON lines and act on each."""
        try:
            data = conn.recv(65536)
        except OSError:
            data = b""
        if not data:
            self.close(conn)
            return
        self.buffers[conn] = self.buffers.get(conn, b"") + data
        while b"\n" in self.buffers.get(conn, b""):
            line, self.buffers[conn] = self.buffers[conn].split(b"\n", 1)
            try:
                message = json.loads(line)
            except ValueError:
                continue
            if isinstance(message, dict):
                self.request(conn, message)

    def reap(self) -> None:
        """Answer the requester of every kernel that has ended."""
        while True:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            for conn, kernel in list(self.kernels.items()):
                if kernel == pid:
                    del self.kernels[conn]
                    self.send(conn, {"exit": os.waitstatus_to_exitcode(status)})

    def serve(self) -> None:
        """Serve until no kernel runs and nothing came for ``idle_seconds``."""
        while self.kernels or time.monotonic() - self.last_activity < self.idle_seconds:
            for key, _ in self.selector.select(timeout=1.0):
                self.last_activity = time.monotonic()
                if key.data == "accept":
                    conn, _ = self.listener.accept()
                    self.buffers[conn] = b""
                    self.selector.register(conn, selectors.EVENT_READ, "conn")
                elif key.data == "wakeup":
                    os.read(self.wakeup_read, 4096)
                    self.reap()
                else:
                    self.read(key.fileobj)
            self.reap()
            # busy while a kernel runs, its own or one a killed server left: the idle time counts from their end
            if self.kernels or strays():
                self.last_activity = time.monotonic()


def main(argv: list[str]) -> None:
    """Serve until idle (exit status 0: the supervisor then ends the student's sandbox)."""
    listen_fd, idle_seconds = int(argv[0]), float(argv[1])
    listener = socket.socket(fileno=listen_fd)
    count = preload(lean="lean" in argv[2:], autograde=AUTOGRADE in argv[2:])
    print(f"zygote: ready ({count} modules preloaded)", file=sys.stderr, flush=True)
    Server(listener, idle_seconds).serve()


if __name__ == "__main__":
    main(sys.argv[1:])
