"""The decode, run first inside the probe job's sandbox, in a child forked before any student code runs.

A separate decode job paid for a sandbox, a Python and ``import torch`` of its own (about 1.2 CPU-s a
student). Here the probe job, having imported torch and nothing of the student's, forks a child that
decodes the submitted params with trusted code, as the decode job does (``decoding.decode``):

- the child alone reads the decode's request, from a pipe the grader writes: the questions and the
  synthesizer reference's source, which never lie in the job's folder (a student's cells could read
  them) nor in the parent's memory (they could search it);
- the parent reads the child's answer, waits for it to end (or kills it at its time limit), writes the
  answer or a fixed problem word to the decode's own pipe and closes it;
- only then does the probe start. By the time a student's cell runs, the decode's answer is sent and
  its pipe shut, the child is gone, and its request was never in this process.
"""
from __future__ import annotations

import os
import select
import signal
import sys
import time
import traceback

from . import wire
from .decoding import decode
from .out_of_memory import ran_out_of_memory

READ_CAP = 96 * 2 ** 20  # bytes of the child's answer kept (the grader caps it again)
MEMORY_EXIT = 3  # the child's exit status for a MemoryError or torch's allocator refused memory
# the problem words the grader turns into its own reasons (``autograder.grading.run_parts``)
PROBLEMS = ("timeout", "memory", "stopped", "too_large")


def _child(request_fd: int, answer_fd: int) -> None:
    """Decode (never returns): read the request, hold the reference in a memory file, answer, exit."""
    status = 1
    try:
        try:  # should the sandbox run out of memory, the kernel kills the decode, not the probe waiting for it
            with open("/proc/self/oom_score_adj", "w") as f:
                f.write("1000")
        except OSError:
            pass
        with os.fdopen(request_fd, "rb") as f:
            request = wire.loads(f.read())
        reference = os.memfd_create("synthesizer_reference.ipynb")  # no file another process could open
        with open(reference, "wb", closefd=False) as f:
            f.write(request.pop("synthesizer_reference_text").encode("utf-8"))
        request["synthesizer_reference"] = f"/proc/self/fd/{reference}"
        data = wire.dumps({"answer": decode(request)})
        with os.fdopen(answer_fd, "wb") as out:
            out.write(data)
        status = 0
    except BaseException as err:  # to the instructor's log only
        if ran_out_of_memory(err):
            status = MEMORY_EXIT
        traceback.print_exc(file=sys.stdout)
    finally:
        sys.stdout.flush()
        os._exit(status)


def _killed(pid: int, problem: str) -> tuple[bytes, str]:
    """Kill the child and reap it: no answer, ``problem``."""
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
    return b"", problem


def _read(read_end: int, pid: int, deadline: float) -> tuple[bytes, str | None]:
    """The child's answer bytes, and a problem word when it did not end well."""
    chunks, size = [], 0
    while True:
        left = deadline - time.monotonic()
        if left <= 0 or not select.select([read_end], [], [], left)[0]:
            return _killed(pid, "timeout")
        chunk = os.read(read_end, 65536)
        if not chunk:
            break
        size += len(chunk)
        if size > READ_CAP:
            return _killed(pid, "too_large")
        chunks.append(chunk)
    while True:  # it exits right after its answer
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            break
        if time.monotonic() > deadline:
            return _killed(pid, "timeout")
        time.sleep(0.01)
    code = os.waitstatus_to_exitcode(status)
    if code == 0:
        return b"".join(chunks), None
    # killed by the cgroup's OOM killer, or a MemoryError under the address-space limit
    return b"", "memory" if code in (MEMORY_EXIT, -signal.SIGKILL) else "stopped"


def decode_first(request_fd: int, answer_fd: int, seconds: float) -> None:
    """Fork the decode, send its answer (or problem) on ``answer_fd`` and close both of its pipes."""
    import torch  # noqa: F401  the probe imports it anyway: once here serves both

    read_end, write_end = os.pipe()
    sys.stdout.flush()  # nothing buffered is printed twice
    try:
        pid = os.fork()
    except OSError:  # the sandbox's process cap: the decode's problem, never the notebooks'
        for fd in (read_end, write_end, request_fd):
            os.close(fd)
        with os.fdopen(answer_fd, "wb") as out:
            out.write(wire.dumps({"problem": "stopped"}))
        return
    if pid == 0:
        os.close(read_end)
        os.close(answer_fd)
        _child(request_fd, write_end)
    os.close(request_fd)
    os.close(write_end)
    started = time.monotonic()
    try:
        data, problem = _read(read_end, pid, started + seconds)
    finally:
        os.close(read_end)
    print(f"[grader] decode, run first: {time.monotonic() - started:.1f} s, {problem or 'answered'}", flush=True)
    with os.fdopen(answer_fd, "wb") as out:
        out.write(data if problem is None else wire.dumps({"problem": problem}))
