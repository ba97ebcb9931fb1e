"""Run untrusted submission code in its own process, with a wall-time and memory limit, confined.

The parent copies the job's inputs into a fresh folder, writes a request
(JSON) there, and reads the child's answer from a file it names; the child's
prints go to a log and never count. The child confines itself before loading
any submission code (autograder.isolation): the hidden paths are out of its
sight, it runs as an unprivileged user when the grader is root. A hang, a
crash or memory exhaustion becomes a SandboxError with a reason, never the
grader's own.
"""
from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
# the reference solutions never meet submission code
ALWAYS_HIDDEN = [REPO / "solutions"]


class SandboxError(RuntimeError):
    """The sandboxed job did not produce an answer; the message says why."""


def _kill_group(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    proc.wait()


def run_job(job: str, request: dict, timeout: float = 120, memory_mb: int = 4096,
            inputs: dict[str, str | Path] | None = None, hidden: list[str | Path] = ()) -> dict:
    """Run ``autograder.jobs.<job>(request)`` in a child process; returns its JSON answer.

    ``inputs`` maps names to files copied into the child's working folder (the
    request refers to them by those names); ``hidden`` paths are kept out of its sight.
    """
    with tempfile.TemporaryDirectory(prefix="sandbox-") as tmp:
        os.chmod(tmp, 0o755)
        for name, source in (inputs or {}).items():
            shutil.copy(source, Path(tmp) / name)
        answer = Path(tmp) / "answer.json"
        log = Path(tmp) / "log.txt"
        request = dict(request, sandbox=dict(
            memory_mb=memory_mb, cpu_seconds=int(timeout) + 60, owned=[tmp],
            hidden=[str(p) for p in [*ALWAYS_HIDDEN, *hidden]],
            readable=[sys.prefix, sys.base_prefix, str(REPO), tmp]))
        (Path(tmp) / "request.json").write_text(json.dumps(request), encoding="utf-8")
        env = dict(os.environ, OMP_NUM_THREADS="1", COURSE_THREADS="1")
        with open(log, "w") as out:
            # its own session: on a timeout the whole group goes, with any process the job started
            proc = subprocess.Popen(
                [sys.executable, "-m", "autograder.jobs", job, "request.json", str(answer)],
                stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                start_new_session=True, cwd=tmp, env=env,
            )
            try:
                proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                raise SandboxError(f"{job}: still running after {timeout:.0f} s (infinite loop or too slow?)") from None
            finally:
                _kill_group(proc)  # a timed-out job, or what an exited one left running
        tail = log.read_text(errors="replace")[-600:]
        if proc.returncode != 0:
            if "MemoryError" in tail or "out of memory" in tail or proc.returncode in (-9, 137):
                raise SandboxError(f"{job}: ran out of memory (limit {memory_mb} MB)")
            last = tail.strip().splitlines()[-1] if tail.strip() else f"exit code {proc.returncode}"
            raise SandboxError(f"{job}: crashed: {last}")
        try:
            return json.loads(answer.read_text(encoding="utf-8"))
        except (OSError, ValueError) as err:
            raise SandboxError(f"{job}: gave no readable answer ({err})") from None
