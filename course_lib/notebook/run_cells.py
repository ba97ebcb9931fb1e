"""The run cells of 02, 04 and 05: each split of a training run is an nbgrader grade cell of its own.

They put the runs' points in nbgrader's gradebook beside the answers' and the written parts',
so that formgrader, the feedback and ``nbgrader export`` show one course total. A run's
points cannot be earned inside the student's kernel: the course's grader (``autograder grade
--gradebook``) decodes the params handed in, scores their answers against the split's bar and
writes those points into the run's cell. So while nbgrader autogrades, a run cell fails on
purpose (the kernel's own score is 0 until the grader's is written); in Jupyter and in
Validate it says whether the run's predictions are there and, for dev, how many are right.

Before that it reads the logs of the runs that made the split's answers (``course_lib.runs.record``), from the
first training run to the evaluation, and fails on what would cost the points: a run missing or stopped short,
trained with another preset than the course grades, on other data, by code older than the notebook's, or from
params another run has replaced since. nbgrader's Validate shows about 80 characters of a message's line, so
each message starts with what to do and what it concerns.
"""
from __future__ import annotations

import os

from course_lib import layout
from course_lib.data_files import read_birth_places, read_handed_in_predictions
from course_lib.gpt.evaluation import accuracy
from course_lib.notebook import env
from course_lib.notebook.check_failed import CheckFailed
from course_lib.run_specs import RUNS
from course_lib.runs.record import file_print, prints, read_log

AGAIN = "; run the training cell above again"


class ScoredByTheGrader(Exception):
    """The kernel does not score runs: the grader's points replace this cell's 0. Shown by IPython as its message
    alone (``_render_traceback_``), not as a traceback."""

    def _render_traceback_(self) -> list[str]:
        return [f"{type(self).__name__}: {self}"]


class RunNotHandedIn(CheckFailed):
    """The run's predictions are missing or have the wrong number of lines, or a run that made them would lose
    their points: a check's verdict, shown in one line."""


def chain(run_name: str) -> list[str]:
    """The runs that make an evaluation's answers, first training run first, the evaluation last."""
    writes = {spec.writes: name for name, spec in RUNS.items() if spec.writes}
    runs, reads = [run_name], RUNS[run_name].reads
    while reads in writes:
        runs.insert(0, writes[reads])
        reads = RUNS[writes[reads]].reads
    return runs


def label(run_name: str) -> str:
    """How a message names a run of a cell's chain: "pretraining", "finetuning", "the dev answers"."""
    spec = RUNS[run_name]
    if spec.function == "evaluate":
        return f"the {'dev' if spec.eval_corpus == layout.DEV else 'test'} answers"
    return {"pretrain": "pretraining", "finetune": "finetuning"}[spec.function]


def run_problem(run_name: str) -> str | None:
    """What would cost the points of run ``run_name``'s own files, as read from its log; None if nothing."""
    what = label(run_name)
    try:
        saved = read_log(env.OUT_DIR, run_name)
    except ValueError:
        return f"retrain: {what} left an unreadable run log ({run_name}.json)"
    if saved is None:
        return f"retrain: {what} left no run log ({run_name}.json)"
    if not saved.completed:
        return f"finish training: {what} stopped at step {saved.steps_done:,} of {saved.steps or 0:,}"
    if saved.preset != env.GRADED_PRESET:
        return f"retrain with {env.GRADED_PRESET}: {what} used the {saved.preset} preset"
    if saved.data:
        current = prints(env.DATA_DIR, saved.data)
        other = [name for name, seen in saved.data.items() if current[name] != seen]
        if other:
            return f"retrain: {what} read other data than {env.DATA_DIR.name}/ ({other[0]})"
    current_code = env.CURRENT_CODE.get(run_name, {})
    older = [part for part, seen in saved.code.items() if current_code.get(part, seen) != seen]
    if older:
        return f"retrain: {what} ran older code of {older[0]}"
    for name, seen in saved.reads.items():
        if file_print(env.OUT_DIR / name) != seen:
            return f"retrain: {what} started from an older {name}"
    for name, seen in saved.outputs.items():
        if file_print(env.OUT_DIR / name) != seen:
            return f"retrain: {name} changed after {what} wrote it"
    return None


def check_run(run_name: str) -> None:
    """The cell of one evaluation run (``vanilla_eval_dev_without_pretrain``, ...): see the module's docstring."""
    spec = RUNS[run_name]
    if os.environ.get("NBGRADER_EXECUTION") == "autograde":
        raise ScoredByTheGrader(f"the course's grader scores {spec.outputs} by decoding the params it came from; "
                                "your grade report gives its points and why")
    path = env.OUT_DIR / spec.outputs
    if not path.is_file():
        raise RunNotHandedIn(f"run the training cell above: {spec.outputs} is not written yet (it goes to "
                             f"{env.OUT_DIR} once every part the cell runs is written)")
    questions = read_birth_places(env.ensure_data() / spec.eval_corpus)  # [N]
    for name in chain(run_name):
        problem = run_problem(name)
        if problem is not None:
            raise RunNotHandedIn(problem + AGAIN)
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
