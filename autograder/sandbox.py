"""Run untrusted submission code in its own process, with a wall-time and memory limit.

The parent writes a request (JSON) and reads the child's answer from a file it
names; the child's prints go to a log and never count. A hang, a crash or
memory exhaustion becomes a SandboxError with a reason, never the grader's own.
"""
from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import tempfile
from pathlib import Path


class SandboxError(RuntimeError):
    """The sandboxed job did not produce an answer; the message says why."""


def _limits(memory_mb: int):
    def apply():
        limit = memory_mb * 1024 * 1024
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
        os.setsid()  # its own process group: a timeout kills every child it started

    return apply


def run_job(job: str, request: dict, timeout: float = 120, memory_mb: int = 4096, cwd: str | None = None) -> dict:
    """Run ``autograder.jobs.<job>(request)`` in a child process; returns its JSON answer."""
    with tempfile.TemporaryDirectory(prefix="sandbox-") as tmp:
        answer = Path(tmp) / "answer.json"
        log = Path(tmp) / "log.txt"
        (Path(tmp) / "request.json").write_text(json.dumps(request), encoding="utf-8")
        env = dict(os.environ, OMP_NUM_THREADS="1", COURSE_THREADS="1")
        with open(log, "w") as out:
            try:
                proc = subprocess.run(
                    [sys.executable, "-m", "autograder.jobs", job, str(Path(tmp) / "request.json"), str(answer)],
                    stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, timeout=timeout,
                    preexec_fn=_limits(memory_mb), cwd=cwd or tmp, env=env,
                )
            except subprocess.TimeoutExpired:
                raise SandboxError(f"{job}: still running after {timeout:.0f} s (infinite loop or too slow?)") from None
        tail = log.read_text(errors="replace")[-600:]
        if proc.returncode != 0:
            if "MemoryError" in tail or proc.returncode in (-9, 137):
                raise SandboxError(f"{job}: ran out of memory (limit {memory_mb} MB)")
            last = tail.strip().splitlines()[-1] if tail.strip() else f"exit code {proc.returncode}"
            raise SandboxError(f"{job}: crashed: {last}")
        try:
            return json.loads(answer.read_text(encoding="utf-8"))
        except (OSError, ValueError) as err:
            raise SandboxError(f"{job}: gave no readable answer ({err})") from None
