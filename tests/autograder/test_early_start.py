"""The early start: the fork servers and templates the grading commands start before their own imports."""
from __future__ import annotations

import json
import subprocess
import sys

import pytest

from autograder import early_start
from autograder.early_start import AUTOGRADE_COMMAND_PRELOAD, GRADE_COMMAND_PRELOAD, REPORT_COMMAND_PRELOAD

# the modules each command imports after its early start (autograder/__main__.py's _grade and _autograde)
COMMAND_MODULES = {
    "grade": ("autograder.grading.folder", "autograder.grading.results", "autograder.units.dask"),
    "autograde": ("autograder.nbgrader_glue.setup", "autograder.nbgrader_glue.zygote_server",
                  "autograder.collecting.flags", "autograder.collecting.near_copies", "autograder.exports.csv_safe",
                  "autograder.exports.step_summary", "autograder.nbgrader_glue.autograde", "autograder.units.dask"),
    "report": ("autograder.exports.report", "nbgrader.api", "autograder.exports.step_summary", "autograder.term.late"),
}


def _registered(modules: tuple[str, ...]) -> list[str]:
    """What importing ``modules`` in a fresh interpreter registers for the fork server."""
    code = (f"import importlib\nfor m in {modules!r}: importlib.import_module(m)\n"
            "import json; from autograder.units.unit import PRELOADS; print(json.dumps(sorted(PRELOADS)))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return json.loads(done.stdout)


@pytest.mark.parametrize("command, early", [("grade", GRADE_COMMAND_PRELOAD), ("autograde", AUTOGRADE_COMMAND_PRELOAD),
                                            ("report", REPORT_COMMAND_PRELOAD)])
def test_the_early_fork_server_preloads_what_the_commands_modules_register(command, early):
    """Does each command's early fork server import exactly what its steps would have it import?"""
    assert sorted(early) == _registered(COMMAND_MODULES[command])


def test_the_early_start_starts_nothing_for_a_scheduler_and_each_template_asked_for(monkeypatch):
    """Does ``start_early`` leave a scheduler's commands alone (their units run on its workers), and otherwise start
    the fork server with the command's preload and exactly the templates it names (none where jobs are unconfined)?"""
    from autograder.confinement import template
    from autograder.units import unit

    started = []
    monkeypatch.setattr(unit, "start_fork_server", lambda preload: started.append(("fork server", preload)))
    monkeypatch.setattr(template, "warm", lambda preload, isolated: started.append(("template", preload, isolated)))
    early_start.start_early(GRADE_COMMAND_PRELOAD, [(("torch",), True)], "tcp://scheduler:8786")
    assert started == []
    early_start.start_early(GRADE_COMMAND_PRELOAD, [(("torch",), True)], None)
    assert started == [("fork server", GRADE_COMMAND_PRELOAD), ("template", ("torch",), True)]
    started.clear()
    early_start.start_early(AUTOGRADE_COMMAND_PRELOAD, [], None)
    assert started == [("fork server", AUTOGRADE_COMMAND_PRELOAD)]
