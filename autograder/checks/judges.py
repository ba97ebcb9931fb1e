"""Judges of the numeric twins (07, 08), and the reference solutions the grader trusts.

A judge gets the inputs the grader chose (its own copy) and the untrusted
output, and returns the problems it finds (empty: passed). The judges of 02-05
are in course_lib.checks (public checks: the same code the notebooks run) and
autograder.checks.hidden (hidden checks); ``autograder.checks.registry`` names each one.
"""
from __future__ import annotations

import functools

from autograder.checks import hidden_twins
from course_lib import twin_checks
from course_lib.layout import SOLUTIONS_DIR as SOLUTIONS
from course_lib.notebook_loader import load_notebook, load_notebooks, notebook_paths


@functools.lru_cache(maxsize=1)
def reference():
    """The graded parts as the instructor wrote them (trusted code, loaded in the grader only)."""
    return load_notebooks(notebook_paths(SOLUTIONS), module_name="judge_reference")


@functools.lru_cache(maxsize=4)
def given(notebook: str):
    """A solution notebook's own values (keys, values, X, ...): the twins are judged on these, not the sandbox's."""
    return load_notebook(SOLUTIONS / notebook, module_name=f"judge_given_{notebook[:2]}")


# --- numeric twins (07, 08) ------------------------------------------------------------------------
# One check per twin, shared with the notebooks' test cells (course_lib.twin_checks); here it runs on the
# solution notebook's own given values and the raw values the submission sent back. The 07 checks sample
# nothing (the seed a grading records does not enter them); the 08 checks call the student's functions on
# inputs drawn from the grading's seed. 08 (b) has two cells: the public properties, and the exact
# comparison with the formula (autograder.checks.hidden_twins, never shipped).

NB07, NB08 = "07_attention_exploration.ipynb", "08_position_embeddings.ipynb"


def _output(output) -> dict:
    return output if isinstance(output, dict) else {}


def _results(output, name: str, calls: list) -> list:
    got = _output(output).get(name)
    if not isinstance(got, list):
        return [RuntimeError(f"did not come back ({type(got).__name__})")] * len(calls)
    return got


def twin_07_a(inputs: dict, output) -> list[str]:
    g = given(NB07)
    return twin_checks.problems_07_a(_output(output).get("q_copy"), g.keys, g.values)


def twin_07_b(inputs: dict, output) -> list[str]:
    g, got = given(NB07), _output(output)
    return twin_checks.problems_07_b(got.get("M"), got.get("q_avg"), g.keys, g.values, g.basis_a, g.basis_b)


def twin_07_c(inputs: dict, output) -> list[str]:
    g = given(NB07)
    return twin_checks.problems_07_c(_output(output).get("q_single"), g.means, g.values, g.a, g.b)


def twin_07_d(inputs: dict, output) -> list[str]:
    g, got = given(NB07), _output(output)
    return twin_checks.problems_07_d(got.get("q_1"), got.get("q_2"), g.means, g.values, g.a, g.b)


def twin_07_e(inputs: dict, output) -> list[str]:
    g, got = given(NB07), _output(output)
    return twin_checks.problems_07_e(got.get("c2_plain"), got.get("K"), got.get("Q"), got.get("V"), g.X, g.u_b,
                                     g.u_c)


def twin_08_a(inputs: dict, output) -> list[str]:
    g = given(NB08)
    calls = [tuple(c) for c in inputs["calls"]["permuted_output"]]
    return twin_checks.problems_08_a(_output(output).get("P"), _results(output, "permuted_output", calls), calls,
                                     g.params, g.T)


def twin_08_b(inputs: dict, output) -> list[str]:
    """The public check's properties of Phi, on fresh sizes."""
    calls = [tuple(c) for c in inputs["calls"]["position_embeddings"]]
    return twin_checks.problems_08_b(calls, _results(output, "position_embeddings", calls))


def twin_08_b_hidden(inputs: dict, output) -> list[str]:
    """Phi against the formula itself, entry by entry, on fresh sizes (the hidden cell's check)."""
    calls = [tuple(c) for c in inputs["calls"]["position_embeddings"]]
    return hidden_twins.problems_08_b_exact(calls, _results(output, "position_embeddings", calls))
