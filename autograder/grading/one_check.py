"""One check graded in this process as ``autograder grade`` grades it, minus the sandbox.

The probe runs on what the grader sends into the sandbox (the check's inputs
through the wire), its output comes back through the wire, and the judge decides
on the grader's own copy of the inputs. A probe that raises gets the reason the
grader writes for it. The checks' own tests (tests/course_lib/checks/) and
the benchmarks that measure the checks (benchmarks/mutation_checks.py,
benchmarks/check_false_rejection.py) all grade answers this way, so what they
measure is what students get.
"""
from __future__ import annotations

import contextlib
import random
import signal
from pathlib import Path

from autograder.checks import registry
from autograder.grading.code_parts import error_reason
from autograder.inside import wire
from autograder.inside.out_of_memory import ran_out_of_memory
from autograder.inside.probes import PROBES

# code_parts' words for a judge that crashed
GENERIC = "the check's outputs were not of the expected form"


class ProbeTimeout(Exception):
    """A probe ran past its check's share of the job's time."""


def prepare(seed: int, folder: Path) -> dict[str, dict]:
    """Every check's fresh inputs for grading seed ``seed``, their files written in ``folder``."""
    inputs, _ = registry.prepare(random.Random(seed), folder)
    return inputs


@contextlib.contextmanager
def _time_limit(seconds: int | None):
    """Raise ProbeTimeout after ``seconds`` (as the sandbox's alarm does); no limit for None."""
    if not seconds:
        yield
        return

    def expire(signum, frame):
        raise ProbeTimeout()

    previous = signal.signal(signal.SIGALRM, expire)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def _probe_error(err: BaseException, check: registry.Check) -> list[str]:
    """The reason the grader gives for a probe that did not return (its fixed vocabulary)."""
    kind = ("not_written" if isinstance(err, NotImplementedError) else "memory" if ran_out_of_memory(err)
            else "timeout" if isinstance(err, ProbeTimeout) else "raised")
    return [error_reason({"kind": kind, "type": type(err).__name__, "where": None}, check, {})]


def grade_check(check: registry.Check, parts, inputs: dict, folder: Path, seconds: int | None = None) -> list[str]:
    """The problems the grader reports for ``parts`` on the check's ``inputs`` (empty: full points).

    ``folder`` holds the files the inputs name (the job's folder, where the probe
    runs); ``seconds`` bounds the probe (the sandbox's per-check alarm).
    """
    sent = wire.loads(wire.dumps(registry.sent_inputs(check, inputs)))
    try:
        with contextlib.chdir(folder), _time_limit(seconds):
            output = PROBES[check.probe](parts, sent)
    except Exception as err:  # the sandbox's error kinds (inside.job.probe), in the grader's words
        return _probe_error(err, check)
    try:
        output = wire.loads(wire.dumps(output))
    except Exception:  # an output the wire cannot carry never reaches the judge
        return ["no result came back for this check"]
    try:
        return check.judge(inputs, output)
    except Exception:
        return [GENERIC]
