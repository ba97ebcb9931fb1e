"""Run one grading job on untrusted material, confined (``sandbox``), and bring back its raw answer.

The job folder holds only copies of what the job needs; the sandbox sees it
read-only at /job. The job's interpreter is forked from the class-wide template, which
imported torch once (``template``), into bubblewrap's sandbox; where the template cannot
take it, the job starts an interpreter of its own. The answer comes back through a pipe the grader reads up
to a cap; everything the job prints goes to a capped log for the instructor.
A hang, a crash, a memory hog or an oversized answer becomes a short reason
from a fixed vocabulary (``JobResult.problem``); nothing the job wrote is
ever copied into a reason.
"""
from __future__ import annotations

import os
import resource
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from autograder import confinement
from autograder.confinement import COURSE_LIB, Cgroup, Limits, Mounts, template
from autograder.inside import wire
from autograder.inside.out_of_memory import ALLOCATOR_REFUSED

INSIDE = Path(__file__).resolve().parents[1] / "inside"  # autograder/inside: runs in the sandbox
# answer bytes read back, more is a reason: the probe job's right answer reaches ~37 MB (the span
# checks' tensors); the parse is bounded by its count of values, not bytes
ANSWER_CAP = 96 * 2 ** 20
LOG_CAP = 256 * 1024  # bytes of the job's prints kept for the instructor
# the grader's own course_lib first: the venv may have been installed from another checkout
ENTRY = ("import sys; sys.path[:0] = [{root!r}, {course!r}]; from inside.job import main; main()")


class UnconfinedError(RuntimeError):
    """Confinement is unavailable here and the instructor did not accept grading without it."""


@dataclass
class JobResult:
    """What came back from one job."""

    answer: object | None  # the decoded raw answer, or None
    problem: str | None  # a grader-written reason when there is no usable answer
    log: str  # the tail of what the job printed: for the instructor only
    seconds: float  # wall time
    first: bytes = b""  # what the job's first task sent on its own pipe (``run_job(first=...)``), raw


def _drain(stream, cap: int, sink: list, overflow: list) -> None:
    """Read a pipe to its end, keeping at most ``cap`` bytes (the rest is read and dropped)."""
    size = 0
    while True:
        chunk = stream.read(65536)
        if not chunk:
            break
        if size < cap:
            sink.append(chunk[: cap - size])
        size += len(chunk)
    if size > cap:
        overflow.append(size)
    stream.close()


def _set_rlimits(limits: Limits) -> None:
    """The job's rlimits, each set as both soft and hard limit (in bubblewrap's process, before its exec)."""
    for kind, value in ((resource.RLIMIT_AS, limits.memory_mb * 2 ** 20),
                        (resource.RLIMIT_FSIZE, limits.scratch_mb * 2 ** 20),
                        (resource.RLIMIT_NOFILE, limits.open_files), (resource.RLIMIT_CORE, 0)):
        resource.setrlimit(kind, (value, value))


def run_job(job: str, request: dict, inputs: dict[str, str | Path], timeout: float = 300,
            limits: Limits = Limits(), confined: bool = True, env: dict[str, str] | None = None,
            answer_cap: int = ANSWER_CAP, first: tuple[bytes, float] | None = None) -> JobResult:
    """Run ``inside.job`` JOB on ``request`` with copies of ``inputs`` (name -> file) at /job.

    ``first`` (a request's bytes, seconds) runs the decode first, before JOB (``inside.decode_first``): its
    request goes through a pipe only the decode reads, never into /job, and what it sends back through a
    pipe of its own is ``JobResult.first``.

    ``env`` adds environment variables; in their values ``{job}`` is the job's folder and ``{tmp}``
    its scratch folder, as the job sees them. ``answer_cap`` bounds the answer read back (a larger
    one for a job that returns params). ``confined=False`` runs it with resource limits only (an
    instructor's explicit choice).
    """
    if confined and confinement.status() is not None:
        raise UnconfinedError(confinement.status())
    start = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="grader-job-") as tmp:
        folder = Path(tmp) / "job"
        folder.mkdir(mode=0o755)
        for name, source in inputs.items():
            target = folder / name
            target.parent.mkdir(mode=0o755, parents=True, exist_ok=True)
            shutil.copyfile(source, target)  # a plain copy: the collect step already refused links
            os.chmod(target, 0o644)
        (folder / "request.json").write_bytes(wire.dumps(request))
        os.chmod(folder / "request.json", 0o644)
        read_answer, write_answer = os.pipe()
        side = _side_pipes(first)  # ((request read, request write), (answer read, answer write)), else ()
        side_fds = (side[0][0], side[1][1]) if side else ()  # the ends the job holds
        extra_args = [*map(str, side_fds), str(first[1])] if side else []
        if confined:
            mounts = Mounts(read_only={str(folder): "/job", str(INSIDE): "/grader/inside"})
            entry = ENTRY.format(root="/grader", course=str(COURSE_LIB.parent))
            command = [sys.executable, "-I", "-c", entry, job, "/job/request.json",
                       str(write_answer), *extra_args]
            extra = {k: v.format(job="/job", tmp="/tmp") for k, v in (env or {}).items()}
            argv = confinement.bwrap_argv(command, mounts, limits, chdir="/job", env=extra)
            cwd, env = tmp, {"PATH": os.environ.get("PATH", "/usr/bin:/bin")}
        else:
            scratch = Path(tmp) / "scratch"
            scratch.mkdir()
            entry = ENTRY.format(root=str(INSIDE.parent), course=str(COURSE_LIB.parent))
            argv = [sys.executable, "-I", "-c", entry, job,
                    str(folder / "request.json"), str(write_answer), *extra_args]
            cwd = str(folder)
            extra = {k: v.format(job=str(folder), tmp=str(scratch)) for k, v in (env or {}).items()}
            env = {"PATH": os.environ.get("PATH", ""), "HOME": str(scratch), "TMPDIR": str(scratch),
                   "MPLCONFIGDIR": str(scratch), "OMP_NUM_THREADS": "1", "COURSE_THREADS": "1", **extra}
        cgroup = Cgroup(limits) if confined else None

        def enter() -> None:
            if cgroup is not None:
                cgroup.enter()
            _set_rlimits(limits)

        read_log, write_log = os.pipe()
        proc = None
        if confined and template.wanted():
            job_fds = {1: write_log, 2: write_log, write_answer: write_answer, **{fd: fd for fd in side_fds}}
            proc = _from_template(argv, job_fds, limits, cgroup, enter, cwd, env)
        if proc is None:
            proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=write_log, stderr=write_log,
                                    cwd=cwd, env=env, pass_fds=(write_answer, *side_fds),
                                    preexec_fn=enter, start_new_session=True)
        os.close(write_answer)
        os.close(write_log)
        answer_chunks, log_chunks, overflow, log_overflow = [], [], [], []
        readers = [threading.Thread(target=_drain, args=(os.fdopen(read_answer, "rb"), answer_cap, answer_chunks,
                                                         overflow), daemon=True),
                   threading.Thread(target=_drain, args=(os.fdopen(read_log, "rb"), LOG_CAP, log_chunks,
                                                         log_overflow), daemon=True)]
        first_chunks, first_overflow = [], []
        if side:
            (read_request, write_request), (read_first, write_first) = side
            os.close(read_request)
            os.close(write_first)
            threading.Thread(target=_send, args=(write_request, first[0]), daemon=True).start()
            readers.append(threading.Thread(target=_drain, args=(os.fdopen(read_first, "rb"), answer_cap,
                                                                 first_chunks, first_overflow), daemon=True))
        for reader in readers:
            reader.start()
        timed_out = False
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            timed_out = True
        finally:
            template.kill_group(proc)
            if cgroup is not None:
                out_of_memory = cgroup.out_of_memory()
                cgroup.kill()  # whatever the job started, wherever it went
            else:
                out_of_memory = False
            for reader in readers:
                reader.join(timeout=10)
        log = b"".join(log_chunks).decode("utf-8", errors="replace")
        seconds = time.monotonic() - start
        problem = None
        if timed_out:
            problem = f"ran past the time limit of {timeout:.0f} s and was stopped"
        # the log also holds tracebacks a probe caught: evidence only when the job died
        elif out_of_memory or proc.returncode in (-9, 137) or (proc.returncode != 0 and any(
                words in log[-2000:] for words in ("MemoryError", ALLOCATOR_REFUSED))):
            problem = f"ran out of memory (the limit is {limits.memory_mb} MB) and was stopped"
        elif overflow:
            problem = f"answered with more than the {answer_cap // 2 ** 20} MB the grader reads back"
        elif proc.returncode != 0:
            problem = f"stopped before answering (exit code {proc.returncode})"
        first_bytes = b"" if first_overflow else b"".join(first_chunks)
        if problem:
            return JobResult(None, problem, log, seconds, first_bytes)
        try:
            return JobResult(wire.loads(b"".join(answer_chunks)), None, log, seconds, first_bytes)
        except wire.WireError:
            return JobResult(None, "gave an answer the grader could not read", log, seconds, first_bytes)


def _from_template(argv: list[str], job_fds: dict[int, int], limits: Limits, cgroup: Cgroup, enter,
                   cwd: str, env: dict[str, str]) -> subprocess.Popen | None:
    """Start the job from the class-wide template (``template``) in a sandbox of ``argv``'s own making, around a
    holder: bubblewrap's process, which ends with the job's status; None (the job then starts its own interpreter)
    when the template cannot take it, said in the job's log."""
    separator = argv.index("--")
    python = argv.index(sys.executable, separator)  # setpriv's arguments end here; then python -I -c ENTRY ...
    entry, job_argv = argv[python + 3], argv[python + 4:]
    try:
        return template.start_in_sandbox(argv[:python], job_fds, job_argv, entry, output=job_fds[1], preexec=enter,
                                         cwd=cwd, env=env)
    except template.TemplateError as err:
        os.write(job_fds[1], f"[grader] the job starts its own interpreter: {err}\n".encode())
        for _ in range(100):  # the holder's sandbox ends with bubblewrap, a moment later
            if not cgroup.pids():
                break
            time.sleep(0.02)
        return None


def _side_pipes(first: tuple[bytes, float] | None) -> tuple:
    """The first task's two pipes, ((request read, request write), (answer read, answer write)), or ()."""
    return (os.pipe(), os.pipe()) if first is not None else ()


def _send(fd: int, data: bytes) -> None:
    """Write ``data`` to a pipe and close it; a reader that ended first only shortens it."""
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
    except OSError:  # BrokenPipeError among them
        pass


