"""The run cells of 02, 04 and 05: each split of a training run is an nbgrader grade cell of its own.

They put the runs' points in nbgrader's gradebook beside the answers' and the written parts',
so that formgrader, the feedback and ``nbgrader export`` show one course total. A run's
points cannot be earned inside the student's kernel: the course's grader (``autograder grade
--gradebook``) decodes the params handed in, scores their answers against the split's bar and
writes those points into the run's cell. So while nbgrader autogrades, a run cell fails on
purpose (the kernel's own score is 0 until the grader's is written); in Jupyter and in
Validate it says whether the run's predictions are there and, for dev, how many are right.
"""
from __future__ import annotations

import os

from course_lib import layout
from course_lib.data_files import read_birth_places, read_handed_in_predictions
from course_lib.gpt.evaluation import accuracy
from course_lib.notebook import env
from course_lib.notebook.check_failed import CheckFailed
from course_lib.run_specs import RUNS


class ScoredByTheGrader(Exception):
    """The kernel does not score runs: the grader's points replace this cell's 0. Shown by IPython as its message
    alone (``_render_traceback_``), not as a traceback."""

    def _render_traceback_(self) -> list[str]:
        return [f"{type(self).__name__}: {self}"]


class RunNotHandedIn(CheckFailed):
    """The run's predictions are missing or have the wrong number of lines: a check's verdict, shown in one line."""


def check_run(run_name: str) -> None:
    """The cell of one evaluation run (``vanilla_eval_dev_without_pretrain``, ...): see the module's docstring."""
    spec = RUNS[run_name]
    if os.environ.get("NBGRADER_EXECUTION") == "autograde":
        raise ScoredByTheGrader(f"the course's grader scores {spec.outputs} by decoding the params it came from; "
                                "your grade report gives its points and why")
    path = env.OUT_DIR / spec.outputs
    if not path.is_file():
        raise RunNotHandedIn(f"{spec.outputs} is not written yet: the training cell above writes it to "
                             f"{env.OUT_DIR} once every part it runs is written")
    questions = read_birth_places(env.ensure_data() / spec.eval_corpus)  # [N]
    predictions = read_handed_in_predictions(path, len(questions))  # as the grader reads them
    if len(predictions) != len(questions):
        raise RunNotHandedIn(f"{spec.outputs} has {len(predictions)} lines for {len(questions)} questions: "
                             "run the training cell above again")
    if spec.eval_corpus == layout.DEV:
        correct, total = accuracy(predictions, [q.place for q in questions])
        print(f"{spec.outputs}: {correct}/{total} dev answers right ({100 * correct / total:.1f}%); the grader "
              "scores the answers of the params you hand in against the course's bar")
    else:
        print(f"{spec.outputs}: {len(predictions)} answers, one per test question; the grader scores them")
