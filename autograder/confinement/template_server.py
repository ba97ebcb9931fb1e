"""A class-wide preloaded interpreter that forks each grading job into the sandbox bubblewrap made for it.

    python [-I] template_server.py SOCKET_PATH IDLE_SECONDS MODULE...

Started by ``autograder.confinement.template`` as root, outside every sandbox, with the sandboxes' own
environment and a mount namespace of its own whose /tmp is empty. It imports MODULE... (for the score of record's
jobs torch and torch._dynamo, under ``-I`` as the jobs' own interpreter runs; for nbgrader's kernel sandbox,
ipykernel, IPython, numpy, torch and matplotlib, under the flags of its ``python -m``) and nothing else: it never
opens a student's file and runs no student code, so its memory holds nothing of anyone's. It then accepts requests
on SOCKET_PATH (in a folder only root can reach); each is one message with the job's descriptors attached
(SCM_RIGHTS), then a pidfd of bubblewrap's holder in the job's sandbox and the holder's pipe: the holder's host pid,
the descriptor numbers the job expects, its argv, working folder, environment, umask, rlimits (the holder's own) and
how often a job killed by a signal is started anew.

For each request it forks a child, which
  1. joins every cgroup the holder is in (the job's memory, pids and CPU limits count from here on),
  2. enters the holder's IPC, UTS, network, cgroup, PID and mount namespaces at once (setns on its pidfd),
  3. forks the job into that PID namespace, and waits for it; then writes the job's exit status (128 + the signal,
     as a shell says it) to the holder's pipe, which ends the holder, so bubblewrap ends with the job's status.
The job, before any code of the job runs: a session of its own, the parent-death signal, no capability in its
bounding set, its descriptors at their numbers and every other one closed, the rlimits, no groups, nobody (65534)
for real, effective and saved ids (from root: no capability left), no_new_privs, dumpable as after an exec, the
working folder and the environment (``PWD`` as bubblewrap's ``--chdir`` sets it), the random generators seeded
anew; then the entry code runs as ``python -c`` would run it. ``benchmarks/template_fork.py``,
``tests/autograder/confinement/test_template.py`` and ``tests/autograder/nbgrader_glue/test_kernel.py`` compare what
such a job sees with bubblewrap's own.

With no request for IDLE_SECONDS it exits. Imports only the standard library at first (this file runs by itself).
"""
from __future__ import annotations

import contextlib
import ctypes
import fcntl
import gc
import json
import os
import resource
import selectors
import signal
import socket
import sys
import time
import types

NOBODY = 65534  # as autograder.confinement.NOBODY (this file imports nothing of the grader)
# the namespaces bubblewrap makes (sandbox.bwrap_argv); the PID namespace applies to the next fork
NAMESPACES = (("ipc", 0x08000000), ("uts", 0x04000000), ("net", 0x40000000), ("cgroup", 0x02000000),
              ("pid", 0x20000000), ("mnt", 0x00020000))
ALL_NAMESPACES = sum(flag for _, flag in NAMESPACES)  # entered together through the holder's pidfd (Linux 5.8)
PR_SET_PDEATHSIG, PR_SET_DUMPABLE, PR_CAPBSET_DROP, PR_SET_NO_NEW_PRIVS, LAST_CAP = 1, 4, 24, 38, 63
MAX_REQUEST = 256 * 1024  # bytes of one request (an argv and an environment)
MAX_FDS = 16  # descriptors one request may carry
_libc = ctypes.CDLL(None, use_errno=True)
_STARTED_WITH: dict[str, str] = {}  # this process's environment before the preload (main sets it)


def _check(result: int, what: str) -> None:
    if result != 0:
        raise OSError(ctypes.get_errno(), what)


def _become_the_job(request: dict, fds: list[int]) -> None:
    """In the job's process, inside every namespace (never returns): drop to nobody, set up, run the entry."""
    code = 1
    try:
        os.setsid()
        _check(_libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0), "parent-death signal")
        for cap in range(LAST_CAP + 1):  # while root may still drop them (past the last one: EINVAL, ignored)
            _libc.prctl(PR_CAPBSET_DROP, cap, 0, 0, 0)
        targets = request["targets"]
        above = max([2, *targets]) + 1  # copies above every number taken, so no placing clobbers one not placed yet
        moved = [fcntl.fcntl(fd, fcntl.F_DUPFD, above) for fd in fds]
        os.dup2(os.open("/dev/null", os.O_RDONLY), 0)
        for fd, target in zip(moved, targets):
            os.dup2(fd, target)  # dup2 leaves the copy inheritable, as bubblewrap passes them on
        start = 3
        for keep in sorted({t for t in targets if t >= 3}):  # every other descriptor closed: the server's socket too
            os.closerange(start, keep)
            start = keep + 1
        os.closerange(start, 2 ** 20)  # one close_range call
        # the holder's own rlimits (what bubblewrap's process would pass on; none above the template's, which
        # _serve_one checked); after the descriptors: a lower open-files limit closes none
        for kind, soft, hard in request["rlimits"]:
            resource.setrlimit(kind, (soft, hard))
        os.setgroups([])
        os.setresgid(NOBODY, NOBODY, NOBODY)
        os.setresuid(NOBODY, NOBODY, NOBODY)  # from root to nobody: the permitted and effective sets are cleared
        _check(_libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "no_new_privs")
        # dumpable again, as an interpreter bubblewrap execs is: its /proc files are its own (the decode child
        # raises its own oom_score_adj), where setresuid from root left them root's
        _check(_libc.prctl(PR_SET_DUMPABLE, 1, 0, 0, 0), "dumpable")
        os.umask(request["umask"])
        os.chdir(request["cwd"])
        environment = dict(request["env"])
        for key in _STARTED_WITH.keys() - os.environ.keys():  # what the preload's imports took out of theirs
            environment.pop(key, None)
        # and what they set (torch._dynamo its cache folder, debugpy a setting), as in an interpreter that imported them
        environment.update({key: value for key, value in os.environ.items() if _STARTED_WITH.get(key) != value})
        os.environ.clear()
        os.environ.update(environment, PWD=request["cwd"])
        _seed_anew()
        sys.argv = ["-c", *request["argv"]]
        main = types.ModuleType("__main__")
        sys.modules["__main__"] = main
        try:
            exec(compile(request["entry"], "<string>", "exec"), main.__dict__)
            code = 0
        except SystemExit as end:
            code = end.code if isinstance(end.code, int) else (0 if end.code is None else 1)
            if end.code is not None and not isinstance(end.code, int):
                print(end.code, file=sys.stderr)
        except BaseException:
            import traceback

            traceback.print_exc()
            code = 1
    finally:
        try:  # the exit handlers a fresh interpreter would run at its end
            import atexit

            atexit._run_exitfuncs()
        except BaseException:
            pass
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except Exception:
                pass
        os._exit(code)


def _seed_anew() -> None:
    """What a fresh interpreter would draw anew (``random`` reseeds itself after a fork; numpy's global does not)."""
    numpy = sys.modules.get("numpy")
    if numpy is not None:
        numpy.random.seed()


def _cgroup_mounts() -> dict[str, str]:
    """Each cgroup hierarchy's key as /proc/PID/cgroup names it ("memory", "cpu,cpuacct", "name=systemd", "" for
    v2) -> where it is mounted here."""
    mounts = {}
    with open("/proc/self/mountinfo") as f:
        for line in f:
            fields = line.split()
            kind = fields[fields.index("-") + 1]
            if kind == "cgroup2":
                mounts[""] = fields[4]
            elif kind == "cgroup":
                options = fields[fields.index("-") + 3].split(",")
                names = [o for o in options if o.startswith("name=")]
                controllers = [o for o in options if o in _V1_CONTROLLERS]
                mounts[",".join(sorted(controllers)) if controllers else names[0]] = fields[4]
    return mounts


_V1_CONTROLLERS = {"cpu", "cpuacct", "cpuset", "memory", "devices", "freezer", "net_cls", "net_prio", "blkio",
                   "perf_event", "hugetlb", "pids", "rdma", "misc"}


def _join_the_cgroups_of(holder: int) -> None:
    """Move this process into every cgroup the holder is in: the job's (memory, pids, CPU: its limits count from
    here on) and, for the other hierarchies, the grader's, as for bubblewrap's own processes (a cpuacct group
    measuring a grading step counts the job)."""
    mounts = _cgroup_mounts()
    with open(f"/proc/{holder}/cgroup") as f:
        for line in f.read().splitlines():
            _, key, path = line.split(":", 2)
            key = ",".join(sorted(key.split(","))) if key and not key.startswith("name=") else key
            if key in mounts:
                with open(os.path.join(mounts[key], path.lstrip("/"), "cgroup.procs"), "w") as procs:
                    procs.write(str(os.getpid()))


def _enter(request: dict, fds: list[int]) -> None:
    """In the forked child, root: join the cgroups, enter the namespaces, run the job in a child; never returns.
    A job killed by a signal is forked anew up to ``restarts`` times (the student's kernel server: what it started
    goes on in the sandbox, and the next notebook finds a server again)."""
    status_pipe = fds.pop()  # the holder's pipe: the job's status goes there when it ends
    holder_fd = fds.pop()  # a pidfd of the holder: it names that process alone, whatever pid is reused meanwhile
    status = 1
    restarts = int(request.get("restarts", 0))
    try:
        holder = int(request["holder"])
        _join_the_cgroups_of(holder)
        signal.pidfd_send_signal(holder_fd, 0)  # still the holder: the cgroups read were its own
        _check(_libc.setns(holder_fd, ALL_NAMESPACES), "setns")  # all at once, or none
        os.close(holder_fd)
        while True:
            job = os.fork()
            if job == 0:
                os.close(status_pipe)
                _become_the_job(request, fds)
            if not restarts:
                for fd in fds:  # only the job holds them now: its readers see their end when it ends
                    os.close(fd)
                fds = []
            status = os.waitstatus_to_exitcode(os.waitpid(job, 0)[1])
            if status >= 0 or not restarts:
                break
            restarts -= 1
        status = 128 - status if status < 0 else status
    except BaseException as err:  # said in the job's log, for the instructor
        said = f"[grader] the template could not enter the job's sandbox: {type(err).__name__}: {err}\n"
        for fd, target in zip(fds, request.get("targets", [])):
            if target == 1:
                try:
                    os.write(fd, said.encode())
                except OSError:
                    pass
        status = 125
    finally:
        try:
            os.write(status_pipe, f"{status}\n".encode())
        except OSError:
            pass
        os._exit(0)


def _serve_one(conn: socket.socket) -> None:
    """Read one request and its descriptors, fork its job's entering child, answer with that child's pid."""
    fds: list[int] = []
    try:
        message, fds, _, _ = socket.recv_fds(conn, MAX_REQUEST, MAX_FDS)
        request = json.loads(message)
        if len(fds) != len(request["targets"]) + 2:
            raise ValueError("descriptors and their numbers disagree")
        for kind, _, hard in request["rlimits"]:  # no hard limit above this one's (raising needs CAP_SYS_RESOURCE)
            own = resource.getrlimit(kind)[1]
            if own != resource.RLIM_INFINITY and not 0 <= hard <= own:
                raise ValueError(f"the job's hard limit of kind {kind} is above the template's")
        sys.stdout.flush()
        sys.stderr.flush()
        child = os.fork()
        if child == 0:
            conn.close()
            _enter(request, fds)
        conn.sendall(json.dumps({"pid": child}).encode())
    except Exception as err:
        try:
            conn.sendall(json.dumps({"error": f"{type(err).__name__}: {err}"}).encode())
        except OSError:
            pass
    finally:
        for fd in fds:
            os.close(fd)
        conn.close()


def serve(listener: socket.socket, idle_seconds: float) -> None:
    """Answer requests until none has come for ``idle_seconds``, reaping the entering children."""
    selector = selectors.DefaultSelector()
    selector.register(listener, selectors.EVENT_READ)
    last = time.monotonic()
    while time.monotonic() - last < idle_seconds:
        if selector.select(timeout=1.0):
            conn, _ = listener.accept()
            conn.settimeout(10)
            _serve_one(conn)
            last = time.monotonic()
        while True:  # reap every entering child that ended
            try:
                pid, _ = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                break
            if pid == 0:
                break


def main(argv: list[str]) -> None:
    path, idle_seconds, modules = argv[0], float(argv[1]), argv[2:]
    import importlib

    if sys.path and sys.path[0] == os.path.dirname(os.path.abspath(__file__)):
        del sys.path[0]  # this file's own folder (an interpreter without -I): no job's import path holds it

    for kind in (resource.RLIMIT_AS, resource.RLIMIT_DATA):  # a grading unit's own soft limit is not the jobs'
        resource.setrlimit(kind, (resource.getrlimit(kind)[1],) * 2)

    _STARTED_WITH.update(os.environ)
    for name in modules:
        importlib.import_module(name)
    # the preload's objects out of every collection of every process forked from here: a full collection would walk
    # them all (0.14 CPU-s) and write to each one's header, copying every page it touches
    gc.freeze()
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    try:  # left by a template that died between its bind and its rename
        os.unlink(path + ".new")
    except FileNotFoundError:
        pass
    listener.bind(path + ".new")
    os.chmod(path + ".new", 0o600)
    listener.listen(64)
    os.rename(path + ".new", path)  # only a listening socket is ever at the path
    served = os.stat(path).st_ino
    print("ready", flush=True)
    serve(listener, idle_seconds)
    tidy(listener, path, served)


def tidy(listener: socket.socket, path: str, served: int) -> None:
    """At the idle end, under the starters' lock: stop listening, and take this key's socket, log and lock out of the
    templates' folder (a course machine meets new keys over a term: another interpreter, another version of this
    server or of a preload). Where another template serves at the path by then, its files stay. A starter that
    opened the lock before it went opens it again (``template.ensure``)."""
    base = path[: -len(".sock")]
    with locked(base + ".lock"):
        listener.close()
        try:
            ours = os.stat(path).st_ino == served
        except FileNotFoundError:
            ours = True
        if ours:
            for name in (path, base + ".log", base + ".lock"):
                try:
                    os.unlink(name)
                except FileNotFoundError:
                    pass


@contextlib.contextmanager
def locked(path):
    """Hold the lock file at ``path``: the one still there once it is held. A template at its idle end takes its key's
    files away under this lock (``tidy``), so a file opened before that is no one's lock; both the starters
    (``template.ensure``) and an ending template take it this way."""
    while True:
        with open(path, "a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            try:
                current = os.stat(path).st_ino == os.fstat(lock.fileno()).st_ino
            except FileNotFoundError:
                current = False
            if current:
                yield
                return


if __name__ == "__main__":
    main(sys.argv[1:])
