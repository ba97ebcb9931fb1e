"""Tests for the checks' studies (benchmarks/mutation_checks.py, check_false_rejection.py, verdict_seeds.py): do
they still run?"""
from __future__ import annotations

import importlib.util
import re
import sys

from conftest import REPO


def _module(name: str):
    spec = importlib.util.spec_from_file_location(name, REPO / "benchmarks" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # its dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def test_the_mutation_study_kills_every_mutant_of_the_finetune_glue(capsys):
    """Does mutation_checks.py grade 02's mutants as the grader grades, every one killed on a seed?"""
    assert _module("mutation_checks").main(["--parts", "02", "--seeds", "1"]) == 0
    out = capsys.readouterr().out
    assert "02 finetune glue" in out and "100.0%" in out, out[-1500:]


def test_the_false_rejection_study_passes_the_reference(capsys):
    """Does check_false_rejection.py grade the reference on a few seeds of a sampling check with no rejection?"""
    assert _module("check_false_rejection").main(["--checks", "03-span-public", "--seeds", "3"]) == 0
    out = capsys.readouterr().out
    assert re.search(r"^03-span-public +1 +3 +3 +0 ", out, re.M), out[-1500:]


def test_the_verdict_study_runs_the_suites_table_on_its_seeds(capsys):
    """Does verdict_seeds.py run test_verdicts.py's table on the seeds it is given (07 (a): the reference and one
    wrong answer)?"""
    assert _module("verdict_seeds").main(["--seeds", "3", "-k", "07-a-test", "--workers", "0"]) == 0
    out = capsys.readouterr().out
    assert "3 seeds per answer" in out and re.search(r"\b2 passed", out), out[-1500:]
