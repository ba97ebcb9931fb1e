"""One unit of work in a process of its own: values come back, every failure is an outcome with the grader's words."""
from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import unit_work

from autograder.units.limits import UnitLimits
from autograder.units.unit import run_unit

QUICK = UnitLimits(seconds=30, memory_mb=512, answer_mb=4)


def _ends(pid: int, seconds: float = 10) -> bool:
    """Whether process ``pid`` is gone (or a zombie) within ``seconds``."""
    for _ in range(int(seconds * 10)):
        if not os.path.exists(f"/proc/{pid}") or " Z " in open(f"/proc/{pid}/stat").read():
            return True
        time.sleep(0.1)
    return False


def test_a_unit_hands_back_its_value():
    """Does a unit return what its function returned, with its peak memory?"""
    outcome = run_unit(unit_work.add, (2, 3), QUICK)
    assert outcome.ok and outcome.value == 5
    assert 0 < outcome.peak_mb < 512


def test_a_units_collections_skip_what_the_fork_server_preloaded_and_still_collect_its_own():
    """Are the objects the fork server preloaded (torch, nbgrader, the grader) out of a unit's garbage collections
    (frozen: no collection walks them or copies their pages), while a cycle the unit's own work leaves is still
    collected?"""
    outcome = run_unit(unit_work.collections_of_own, (), QUICK)
    assert outcome.ok, outcome.detail
    frozen, kept, freed = outcome.value
    assert frozen > 10_000 and kept and freed, outcome.value


def test_an_exception_is_a_failure_that_names_its_type_not_its_message():
    """Is an exception in the unit its failure, naming the type and never the text a student's file put in it?"""
    outcome = run_unit(unit_work.raise_with_secret, ("SECRET-42",), QUICK)
    assert not outcome.ok and "ValueError" in outcome.failure and "SECRET-42" not in outcome.failure
    assert "SECRET-42" in outcome.detail  # the instructor's log keeps the traceback


def test_deep_nesting_is_a_failure_of_its_own():
    """Is JSON nested 200,000 deep a RecursionError failure of that unit, not of the caller?"""
    outcome = run_unit(unit_work.nest, (200_000,), QUICK)
    assert not outcome.ok and "RecursionError" in outcome.failure


def test_a_memory_hog_fails_within_its_limit():
    """Does a unit that allocates four times its limit fail with out of memory, the caller untouched?"""
    outcome = run_unit(unit_work.hog, (2048,), QUICK)
    assert not outcome.ok and "out of memory" in outcome.failure and "512 MB" in outcome.failure


def test_a_hanging_unit_is_stopped_with_what_it_started(tmp_path):
    """Is a unit past its time killed, and a process it started with the parent-death signal gone too?"""
    pid_file = tmp_path / "pid"
    start = time.monotonic()
    outcome = run_unit(unit_work.spawn_and_hang, (str(pid_file),), UnitLimits(seconds=3, memory_mb=512))
    assert not outcome.ok and "stopped after 3 s" in outcome.failure
    assert time.monotonic() - start < 20
    assert _ends(int(pid_file.read_text())), "the unit's child outlived it"


def test_a_unit_that_dies_is_a_failure():
    """Is a unit killed by a signal (as the kernel's out-of-memory killer would) a failure saying so?"""
    outcome = run_unit(unit_work.die, (), QUICK)
    assert not outcome.ok and "died" in outcome.failure and "SIGKILL" in outcome.failure


def test_an_oversized_value_is_refused():
    """Is a value larger than the unit's answer cap refused rather than read?"""
    outcome = run_unit(unit_work.big, (8,), QUICK)
    assert not outcome.ok and "more than 4 MB" in outcome.failure


def test_a_unit_dies_with_the_process_that_asked_for_it(tmp_path):
    """When the grader (or a Dask worker) that started a unit is killed (kill -9), does the unit die too, with what it
    started, rather than grade on for nobody?"""
    import signal
    import subprocess
    import sys

    pid_file = tmp_path / "pid"
    requester = subprocess.Popen([sys.executable, "-c", (
        "import sys; sys.path[:0] = sys.argv[1:3]\n"
        "import unit_work\nfrom autograder.units.limits import UnitLimits\nfrom autograder.units.unit import run_unit\n"
        "if __name__ == '__main__':\n"
        "    run_unit(unit_work.spawn_and_hang, (sys.argv[3],), UnitLimits(seconds=600))\n"),
        str(Path(unit_work.__file__).parent), str(Path(__file__).parents[3]), str(pid_file)])
    for _ in range(300):
        if pid_file.exists() and pid_file.read_text():
            break
        time.sleep(0.1)
    requester.send_signal(signal.SIGKILL)
    requester.wait()
    assert _ends(int(pid_file.read_text())), "the unit's child outlived the process that asked for the unit"


def test_a_fork_server_started_early_preloads_what_it_was_given_for_every_later_unit():
    """Does ``start_fork_server`` start the fork server at once, preloading the modules it names (not only those
    registered so far), so that a later unit finds them imported?"""
    code = ("import sys, time; from autograder.units.unit import start_fork_server, run_unit\n"
            "from autograder.units.limits import UnitLimits\nimport multiprocessing.forkserver as f\n"
            "import unit_work\n"
            "start_fork_server(('colorsys',))\nassert f._forkserver._forkserver_pid is not None\n"
            "assert 'colorsys' not in sys.modules\n"
            "print(run_unit(unit_work.imported, ('colorsys',), UnitLimits(seconds=30, memory_mb=512)).value)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONPATH": str(Path(unit_work.__file__).parent)})
    assert done.returncode == 0 and done.stdout.strip() == "True", done.stderr[-2000:]
