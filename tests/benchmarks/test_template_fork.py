"""Tests for benchmarks/template_fork.py: does a preloaded process it forks into a sandbox see what the grader's own
sandboxed process sees, and is each way's CPU counted?"""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from conftest import REPO

from autograder import confinement

pytestmark = [pytest.mark.skipif(os.geteuid() != 0 or confinement.status() is not None,
                                 reason=f"needs root and confinement: {confinement.status() or 'not root'}"),
              pytest.mark.timeout(120)]


def test_the_entered_sandbox_is_the_graders_own_and_both_ways_are_timed():
    """Is the template's process nobody with no capabilities in the same mounts, cgroups, limits and environment as
    the grader's sandboxed process, and does each way's CPU come back from its cgroup?"""
    done = subprocess.run([sys.executable, str(REPO / "benchmarks" / "template_fork.py"), "--rounds", "1",
                           "--preload", "probe"], capture_output=True, text=True, timeout=110)
    assert done.returncode == 0, done.stderr[-3000:]
    study = json.loads(done.stdout)
    assert study["same_state"] is True
    seen = study["seen"]
    assert (seen["uid"], seen["gid"], seen["groups"], seen["no_new_privs"]) == (65534, 65534, [], "1")
    assert set(seen["caps"]) == {"0000000000000000"} and seen["host"] == "sandbox"
    assert str(REPO) not in seen["mounts"]  # the course folder itself is not bound, only its venv and course_lib
    # a fresh interpreter that imports torch costs CPU-seconds; the template's child only its fork and the work
    assert study["fresh_median"] > 0.5 and 0 < study["template_median"] < study["fresh_median"]
