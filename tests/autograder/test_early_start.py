"""The early start: the fork servers and templates the grading commands start before their own imports."""
from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

import autograder.__main__
from autograder import early_start
from autograder.early_start import AUTOGRADE_COMMAND_PRELOAD, GRADE_COMMAND_PRELOAD, REPORT_COMMAND_PRELOAD

COMMANDS = {"grade": "_grade", "autograde": "_autograde", "report": "_report"}  # __main__'s function of each


def _command_modules(command: str) -> tuple[str, ...]:
    """Every module ``python -m autograder <command>`` imports by name, read from autograder/__main__.py: its own
    imports, those of ``main`` and of its helpers, and those of the command's function (so a new import there that
    registers a fork server preload fails the test below)."""
    tree = ast.parse(Path(autograder.__main__.__file__).read_text(encoding="utf-8"))
    functions = [f for f in tree.body if isinstance(f, ast.FunctionDef)]
    # the other commands' functions (each takes the parsed ``args`` alone) are not run
    others = {f.name for f in functions if [a.arg for a in f.args.args] == ["args"]} - {COMMANDS[command]}
    assert COMMANDS[command] in {f.name for f in functions} and len(others) >= 2, others
    nodes = [n for n in tree.body if isinstance(n, (ast.Import, ast.ImportFrom))]
    nodes += [n for f in functions if f.name not in others for n in ast.walk(f)]
    modules = [alias.name for n in nodes if isinstance(n, ast.Import) for alias in n.names]
    modules += [n.module for n in nodes if isinstance(n, ast.ImportFrom) and n.module and n.level == 0]
    assert modules, command
    return tuple(dict.fromkeys(modules))


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
    assert sorted(early) == _registered(_command_modules(command))


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
