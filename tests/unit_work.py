"""Work for units in the tests (module-level, so the fork server can import it): values, failures, hogs, hangs."""
from __future__ import annotations

import json
import os
import signal
import time


def add(a: int, b: int) -> int:
    return a + b


def raise_with_secret(text: str) -> None:
    raise ValueError(f"the student's own words: {text}")


def nest(depth: int) -> object:
    return json.loads("[" * depth + "]" * depth)


def hog(mb: int) -> int:
    blocks = [bytearray(2 ** 20) for _ in range(mb)]
    return len(blocks)


def sleep(seconds: float) -> str:
    time.sleep(seconds)
    return "woke"


def die() -> None:
    os.kill(os.getpid(), signal.SIGKILL)


def big(mb: int) -> bytes:
    return b"x" * (mb * 2 ** 20)


def spawn_and_hang(pid_file: str) -> None:
    """Start a grandchild armed to die with this unit (as nbgrader's one_student is), which writes its pid once armed;
    then hang."""
    import subprocess
    import sys

    subprocess.Popen([sys.executable, "-c", "import ctypes, os, signal, sys, time; "
                      "ctypes.CDLL(None).prctl(1, signal.SIGKILL); "
                      "open(sys.argv[1], 'w').write(str(os.getpid())); time.sleep(600)", pid_file])
    time.sleep(600)


def fake_autograde_one(student, settings):
    """nbgrader's part of an autograde, stubbed (tests/autograder/nbgrader_glue/test_autograde.py): it records the start
    in the course's started.txt, makes the autograded folder, and fails the students listed in failing.txt."""
    from pathlib import Path

    from autograder.nbgrader_glue.autograde import Autograded

    course = Path(settings.course)
    with open(course / "started.txt", "a", encoding="utf-8") as f:
        f.write(f"{student} {settings.force}\n")
    (course / "autograded" / student / "a5").mkdir(parents=True, exist_ok=True)
    failing = (course / "failing.txt").read_text().split() if (course / "failing.txt").exists() else []
    return Autograded(student, student not in failing, 1.0, "boom" if student in failing else "", "")


def collect_one_failing_for_bob(submitted, name, *args):
    """The collect unit, except that reading bob's folder fails as an unreadable folder does."""
    from autograder.collecting.cohort import collect_one

    if name == "bob":
        raise PermissionError(13, "Permission denied", f"{submitted}/bob/a5")
    return collect_one(submitted, name, *args)


def stub_grade_task(task, settings, gold):
    """The grade unit, stubbed (tests/autograder/grading/test_cohort.py): records the student in graded.txt beside the
    --out folder, raises for the students listed in fail.txt there, else scores the notebook's length."""
    from pathlib import Path

    from autograder.grading.results import PartResult, SubmissionResult

    base = Path(task.folder).parents[3]  # <base>/<out>/.collected-x/<student>/<assignment>
    with open(base / "graded.txt", "a", encoding="utf-8") as f:
        f.write(task.student + "\n")
    if (base / "fail.txt").exists() and task.student in (base / "fail.txt").read_text().split():
        raise RuntimeError("the grader's own bug")
    text = (Path(task.folder) / "03_span_corruption.ipynb").read_text()
    return SubmissionResult(task.student, [PartResult("03-span-public", len(text) % 5, 5, "stub")])


def collect_student_failing_for_bo(src, record, *args):
    """The exchange collect's unit, except that reading bo's submission fails as a folder bo made unreadable does."""
    from autograder.nbgrader_glue.exchange import collect_student

    if record.student.endswith("bo"):
        raise PermissionError(13, "Permission denied", src)
    return collect_student(src, record, *args)


def parse_answer(data: bytes) -> str:
    """The grader's parse of a job's answer, as a unit does it."""
    from autograder.inside import wire

    try:
        wire.loads(data)
        return "parsed"
    except wire.WireError as err:
        return f"refused: {err}"


def collections_of_own() -> tuple[int, bool, bool]:
    """How many objects are frozen out of collections here; whether a cycle made here outlives its last name and is
    then freed by a collection."""
    import gc
    import weakref

    class Node:
        pass

    gc.disable()
    try:
        node = Node()
        node.me = node
        ref = weakref.ref(node)
        del node
        kept = ref() is not None
        gc.collect()
        return gc.get_freeze_count(), kept, ref() is None
    finally:
        gc.enable()


def imported(name: str) -> bool:
    """Is module ``name`` imported in this unit (preloaded by its fork server: the unit never imports it)?"""
    import sys

    return name in sys.modules
