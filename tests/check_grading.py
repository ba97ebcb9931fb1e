"""Grading one answer the way autograder.grading.grade does, for the checks of the checks.

Each answer runs as the grader runs it (autograder/grading/one_check.py): the check's probe on the
inputs the grader sends (through the wire, as in the sandbox), its output back through the wire, then
the check's judge on the grader's own copy of the inputs. Fresh inputs come from ``one_check.prepare``
with a few fixed seeds. A wrong answer must fail with a message that says something specific (never the
grader's generic "not of the expected form"). Used by the tests of the glue, span and synth parts
(tests/course_lib/checks/test_glue.py, test_span.py, test_synth.py), which bind the fixtures ``prepared``
and ``grade`` in their own namespace for pytest to find.
"""
from __future__ import annotations

import functools
import importlib.util
import types
from pathlib import Path

import pytest

from autograder.checks import registry
from autograder.grading import one_check as check_runner
from course_lib.notebook.validate import SHOWN  # what Validate shows of a message line whole

GENERIC = check_runner.GENERIC  # autograder.grading.grade's words for a judge that crashed
SEEDS = (0, 1, 2)


@pytest.fixture(scope="session")
def prepared(tmp_path_factory):
    """seed -> (every check's fresh inputs, the folder holding the files they need), made once per seed."""
    cache = {}

    def get(seed: int):
        if seed not in cache:
            folder = tmp_path_factory.mktemp(f"grader-inputs-{seed}")
            cache[seed] = (check_runner.prepare(seed, folder), folder)
        return cache[seed]

    return get


@pytest.fixture
def grade(prepared):
    """(grade_id, parts, seed) -> the problems the grader would report for that answer
    (autograder.grading.one_check)."""

    def run(grade_id: str, parts, seed: int) -> list[str]:
        inputs, folder = prepared(seed)
        return check_runner.grade_check(registry.BY_ID[grade_id], parts, inputs[grade_id], folder)

    return run


@functools.lru_cache(maxsize=None)
def part_tests(part: str) -> types.ModuleType:
    """A graded part's tests (test_<part>.py in tests/course_lib/checks), loaded by path for their answer variants: the
    tests folder is not a package."""
    path = Path(__file__).parent / "course_lib" / "checks" / f"test_{part}.py"
    spec = importlib.util.spec_from_file_location(f"answers_of_{part}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def overrides_grader(reference, prepared):
    """(grade_id, overrides, seed) -> the problems the grader reports for the reference with ``overrides`` in place
    of some of its definitions."""
    base = {k: v for k, v in vars(reference).items() if not k.startswith("__")}

    def run(grade_id: str, overrides: dict, seed: int) -> list[str]:
        inputs, folder = prepared(seed)
        parts = types.SimpleNamespace(**{**base, **overrides})
        return check_runner.grade_check(registry.BY_ID[grade_id], parts, inputs[grade_id], folder)

    return run


def with_parts(reference, **overrides) -> types.SimpleNamespace:
    """The reference notebooks' definitions with some replaced, as the sandbox's ``parts``."""
    return types.SimpleNamespace(**{**{k: v for k, v in vars(reference).items() if not k.startswith("__")},
                                    **overrides})




def assert_fails(problems: list[str], expect: str | None) -> None:
    """A wrong answer's problems: at least one, none blank or the grader's generic words, and one saying ``expect``
    (unless it is None) in its first SHOWN characters, where Validate shows what to fix (issue 51)."""
    assert problems, "a wrong answer passed"
    assert GENERIC not in problems, problems
    assert all(p.strip() for p in problems), problems
    if expect is not None:
        assert any(expect in p for p in problems), problems
        assert any(expect in p[:SHOWN] for p in problems), f"said after character {SHOWN}: {problems}"

