"""One student's work on one step, in a process of its own: the value it returns, or why it failed.

``run_unit(fn, args, limits)`` runs ``fn(*args)`` in a child of multiprocessing's fork server
(started once per process, single-threaded: the child inherits no lock another thread of the
caller held, and none of the caller's memory), with
  - a soft address-space limit (``RLIMIT_AS``) of the unit's own work, on top of the grader's code
    the fork server preloaded: an allocation past it raises MemoryError in the unit, which fails
    that unit only; the jobs and nbgrader processes a unit starts set limits of their own (the
    hard limit stays open for them);
  - a wall-time limit: past it the unit is killed, and what it started dies with it (the unit
    dies with its parent, and arms its own children the same way);
  - a cap on the pickled value it hands back (read with that cap; a longer message is refused).
Every failure comes back as an ``Outcome`` whose ``failure`` is the grader's own words (an
exception's type, never its message: a student's file name or contents could be in it) and
whose ``detail`` (a traceback tail) is for the instructor's log. ``fn`` must be a module-level
function and ``args`` picklable: the fork server rebuilds them in the child.
"""
from __future__ import annotations

import ctypes
import gc
import multiprocessing
import multiprocessing.connection
import os
import pickle
import resource
import signal
import sys
import threading
import time
import traceback
from dataclasses import dataclass
from typing import Any, Callable

from autograder.units.limits import MB, UnitLimits

DETAIL_CHARS = 4000  # characters of a failed unit's traceback kept for the instructor's log
PR_SET_PDEATHSIG = 1  # prctl(2)
_START = threading.Lock()  # the fork server's preload is set once, by this process's first unit
_preloaded = False
# modules the fork server imports as it starts: every step's (autograder.units.stage.Step), so no
# unit imports torch or nbgrader itself
PRELOADS: set[str] = {"autograder.units.unit"}


@dataclass
class Outcome:
    """What one unit gave back: its value, or why there is none."""

    value: Any = None  # what ``fn`` returned (None when it failed)
    failure: str | None = None  # the grader's one-line reason (None: it finished)
    detail: str = ""  # for the instructor's log only: the failure's traceback tail
    peak_mb: float | None = None  # the unit's peak resident memory (None: died before saying)
    seconds: float = 0.0  # its wall time

    @property
    def ok(self) -> bool:
        """Whether the unit finished."""
        return self.failure is None


def failed(reason: str, detail: str = "", seconds: float = 0.0) -> Outcome:
    """A failed unit's outcome, with the grader's ``reason``."""
    return Outcome(None, reason, detail, None, seconds)


def reason_for(err: BaseException, memory_mb: int) -> str:
    """A unit's failure for an exception: its type only, since messages may carry student text."""
    if isinstance(err, MemoryError):
        return f"ran out of memory (a unit's limit is {memory_mb} MB)"
    if isinstance(err, RecursionError):
        return "its files are nested too deeply to read (RecursionError)"
    if isinstance(err, (FileNotFoundError, NotADirectoryError)):
        return f"a file went away while it was read ({type(err).__name__})"
    if isinstance(err, PermissionError):
        return "a file or folder of it cannot be read (PermissionError)"
    if isinstance(err, OSError):
        return f"a file of it could not be read ({type(err).__name__}, errno {err.errno})"
    return f"the grader failed on it ({type(err).__name__})"


def _die_with_parent() -> None:
    """End this unit when the process that asked for it ends (a grader killed, a Dask worker killed
    mid-student): a thread waits on multiprocessing's sentinel of the requesting process, and the
    parent-death signal covers the fork server itself (which outlives its requester while any unit
    runs). What the unit started dies with it."""
    try:
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    except (OSError, AttributeError):
        pass
    requester = multiprocessing.parent_process()
    if requester is not None:
        def watch() -> None:
            multiprocessing.connection.wait([requester.sentinel])
            os.kill(os.getpid(), signal.SIGKILL)

        threading.Thread(target=watch, name="unit-requester-watch", daemon=True).start()


def _address_space() -> int:
    """This process's virtual size in bytes: what it mapped before the unit's work (torch, ...)."""
    with open("/proc/self/status", encoding="ascii") as f:
        for line in f:
            if line.startswith("VmSize:"):
                return int(line.split()[1]) * 1024
    return 0


def _child(conn, work: tuple[Callable, tuple] | bytes, memory_mb: int, answer_bytes: int) -> None:
    """In the unit's process: run ``fn(*args)`` of ``work`` (or of ``pickled_work`` bytes, whose
    value goes back pickled too); send back ("ok", value, peak) or ("failed", reason, detail)."""
    _die_with_parent()
    # what the fork server preloaded (torch, nbgrader, the grader) out of this unit's collections: a full one would
    # walk all of it, and write to each object's header, copying every page it touches
    gc.freeze()
    # one torch thread, as in a Dask worker (its nanny sets OMP_NUM_THREADS=1): a unit's tensor work
    # is small, and units run side by side, where spinning threads only burn CPU
    torch = sys.modules.get("torch")  # preloaded
    if torch is not None:
        torch.set_num_threads(1)
    _, hard = resource.getrlimit(resource.RLIMIT_AS)
    soft = _address_space() + memory_mb * MB  # on top of the code the fork server preloaded
    resource.setrlimit(resource.RLIMIT_AS, (soft if hard == resource.RLIM_INFINITY else min(soft, hard), hard))
    try:
        fn, args = pickle.loads(work) if isinstance(work, bytes) else work
        value = fn(*args)
        if isinstance(work, bytes):
            value = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KB on Linux
        message = pickle.dumps(("ok", value, peak), protocol=pickle.HIGHEST_PROTOCOL)
        if len(message) > answer_bytes:
            message = pickle.dumps(("failed", f"handed back more than {answer_bytes // MB} MB", ""))
    except BaseException as err:  # noqa: BLE001 (every failure is this unit's outcome)
        try:
            message = pickle.dumps(("failed", reason_for(err, memory_mb), traceback.format_exc()[-DETAIL_CHARS:]))
        except BaseException:  # noqa: BLE001 (out of memory even for the traceback)
            message = pickle.dumps(("failed", reason_for(err, memory_mb), ""))
    try:
        conn.send_bytes(message)
    except OSError:  # the requester stopped listening (the unit ran past its time): nobody to tell
        pass
    conn.close()


def _pin_temp_dir() -> None:
    """Put multiprocessing's folder (the fork server's socket) where no step's cleanup reaches it.

    multiprocessing makes that folder once, in whatever ``tempfile.tempdir`` is at its first use: a
    step that points TMPDIR at a scratch folder it later removes would take the fork server's socket
    with it, and every later unit of the process would fail to start. /dev/shm (or the system's
    /tmp) outlives every step."""
    import tempfile
    from multiprocessing import util

    saved = tempfile.tempdir
    stable = next((d for d in ("/dev/shm", "/tmp") if os.access(d, os.W_OK | os.X_OK)), None)
    try:
        tempfile.tempdir = stable or saved
        util.get_temp_dir()  # made now, cached for the process's life
    finally:
        tempfile.tempdir = saved


def _context(preload: tuple[str, ...]):
    """The fork server's context; it preloads ``PRELOADS`` and ``preload`` as of the first unit."""
    global _preloaded
    context = multiprocessing.get_context("forkserver")
    with _START:
        if not _preloaded:  # (no effect once the server runs: it starts with the first unit)
            _pin_temp_dir()
            context.set_forkserver_preload(sorted(PRELOADS | set(preload)))
            _preloaded = True
    return context


def start_fork_server(preload: tuple[str, ...], environment: dict[str, str] | None = None) -> None:
    """Start this process's fork server now, with ``preload`` and every step's registered so far, so that it imports
    them while the command does its own start-up (on another core), not while its first unit waits. What a step
    registers later joins no more: ``preload`` names it. ``environment``: variables for the fork server's preload
    alone, set in this process's environment only while it starts (no effect on a server already running)."""
    import multiprocessing.forkserver

    _context(preload)
    with _START:  # (one start at a time: another caller's variables are never left behind)
        os.environ.update(environment or {})
        try:
            multiprocessing.forkserver.ensure_running()
        finally:
            for name in environment or {}:
                os.environ.pop(name, None)


def _allow_children() -> None:
    """Let a daemonic process (a Dask worker) start units: multiprocessing refuses a daemon's
    children as it could not clean them up, but a unit ends with its requester by itself."""
    current = multiprocessing.current_process()
    if current.daemon:
        current.daemon = False


def run_unit(fn: Callable, args: tuple, limits: UnitLimits, preload: tuple[str, ...] = ()) -> Outcome:
    """``fn(*args)`` as one unit within ``limits``; never raises for anything the unit did."""
    return _run((fn, args), limits, preload)


def pickled_work(fn: Callable, args: tuple) -> bytes:
    """A unit's work as ``run_pickled_unit`` takes it."""
    return pickle.dumps((fn, args), protocol=pickle.HIGHEST_PROTOCOL)


def run_pickled_unit(work: bytes, limits: UnitLimits, preload: tuple[str, ...] = ()) -> Outcome:
    """``run_unit`` of ``pickled_work`` bytes; its value comes back pickled (see ``unpickled``).

    Only the unit unpickles the work, and only the caller's caller unpickles the value: the process
    in between (a Dask worker) imports none of the step's modules (torch, the grader); its fork
    server preloads them once for every unit it forks."""
    return _run(work, limits, preload)


def unpickled(outcome: Outcome) -> Outcome:
    """An outcome of ``run_pickled_unit``, its value unpickled (the grader's code pickled it)."""
    if outcome.ok:
        outcome.value = pickle.loads(outcome.value)
    return outcome


def _run(work: tuple[Callable, tuple] | bytes, limits: UnitLimits, preload: tuple[str, ...]) -> Outcome:
    start = time.monotonic()
    context = _context(preload)
    _allow_children()
    answer_bytes = limits.answer_mb * MB
    reader, writer = context.Pipe(duplex=False)
    process = context.Process(target=_child, args=(writer, work, limits.memory_mb, answer_bytes), daemon=False)
    try:
        process.start()
    except Exception as err:  # noqa: BLE001 (no process: a machine out of processes or memory)
        reader.close()
        writer.close()
        return failed(f"could not start ({type(err).__name__})", traceback.format_exc()[-DETAIL_CHARS:])
    writer.close()  # the child's end: closed here, so its death reads as EOF
    try:
        if not reader.poll(limits.seconds):
            return failed(f"stopped after {limits.seconds:g} s (the step's time limit per student)",
                          seconds=time.monotonic() - start)
        try:
            message = reader.recv_bytes(maxlength=answer_bytes + 4096)
        except EOFError:
            process.join(5)
            return failed(f"its process died ({_exit_text(process.exitcode)})", seconds=time.monotonic() - start)
        except OSError:  # longer than the cap: refused unread
            return failed(f"handed back more than {limits.answer_mb} MB", seconds=time.monotonic() - start)
    finally:
        reader.close()
        process.join(1)
        if process.is_alive():
            process.kill()
            process.join()
        process.close()
    kind, *rest = pickle.loads(message)  # pickled by the grader's code in the unit, not a student's
    seconds = time.monotonic() - start
    if kind == "ok":
        return Outcome(rest[0], None, "", rest[1], seconds)
    return failed(rest[0], rest[1], seconds)


def _exit_text(code: int | None) -> str:
    if code is None:
        return "no exit status"
    if code < 0:
        name = signal.Signals(-code).name if -code in signal.Signals._value2member_map_ else str(-code)
        return f"killed by {name}" + (": out of memory?" if -code == signal.SIGKILL else "")
    return f"exit status {code}"
