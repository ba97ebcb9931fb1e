"""nbgrader's gradebook made ready in a fork server, for the units it forks that read the gradebook.

Imported only by fork servers (``gradebook_preload.GRADEBOOK_PRELOAD``). Each unit that reads the gradebook
(a feedback page, a student's report) is a process forked from its step's fork server; what the fork server
has not done, every unit does again. Importing ``nbgrader.api`` imports the ``nbgrader`` package, whose
``__init__`` imports its Jupyter server extensions (about 0.75 CPU-s); and SQLAlchemy sets up the
gradebook's mapped classes at a process's first query. Sampled with py-spy (issue 50 item 8), that import
was 84% of the samples of each student's report unit, and the set-up 7% of generate_feedback's.

Where the step names its gradebook (``WARM_VARIABLE``, in the fork server's environment only while it starts:
``autograder.units.unit.start_fork_server``), the fork server also opens it and asks it, read only, what the units ask
of a handed-in notebook, then closes it. Each unit then takes that engine with its statements compiled
(``gradebook_engine``) rather than compiling them and setting up its dialect itself: a third of each feedback page's
unit, sampled with py-spy (issue 50 item 8).
"""
import os
import sys

from nbgrader import api  # noqa: F401 (the classes configure_mappers sets up)
from sqlalchemy.orm import configure_mappers

from autograder.exports.gradebook_preload import WARM_VARIABLE

configure_mappers()


def warm(url: str) -> None:
    """Open the gradebook at ``url`` through the engine nbgrader's ``Gradebook`` takes here, ask it nbgrader's
    questions of one handed-in notebook (its submission, grades, comments and source cells), write nothing, and close
    it (its connections with it). A gradebook without a course is left unopened."""
    from sqlalchemy import inspect, select

    from autograder.exports.gradebook_engine import engine_for, reuse_engines

    reuse_engines()
    engine = engine_for(url, echo=False, future=True)  # as nbgrader's Gradebook asks for it
    with engine.connect() as connection:
        known = "course" in inspect(connection).get_table_names()
        course = connection.execute(select(api.Course.id).limit(1)).scalar() if known else None
    if course is None:  # a new gradebook: its first Gradebook would create its tables; that is the step's to do
        engine.dispose()
        return
    with api.Gradebook(url, course) as gb:  # an existing course: Gradebook's check adds nothing
        notebook = gb.db.query(api.SubmittedNotebook).first()
        if notebook is not None:
            assignment, student, name = notebook.assignment.name, notebook.student.id, notebook.name
            submission = gb.find_submission(assignment, student)
            _ = submission.score, submission.max_score, submission.late_submission_penalty
            found = gb.find_submission_notebook(name, assignment, student)
            _ = found.score, found.max_score, found.late_submission_penalty, found.needs_manual_grade
            for grade in found.grades[:1]:
                gb.find_grade(grade.name, name, assignment, student)
                gb.find_source_cell(grade.name, name, assignment)
                _ = grade.score, grade.max_score, grade.auto_score, grade.manual_score
            for comment in found.comments[:1]:
                gb.find_comment(comment.name, name, assignment, student)
        gb.db.rollback()


_url = os.environ.pop(WARM_VARIABLE, None)  # taken out: nothing this fork server forks needs to see it
if _url:
    try:
        warm(_url)
    except Exception as err:  # each unit opens the gradebook cold, as before; said once in the fork server's stderr
        print(f"gradebook: the fork server could not open it ahead of the units ({type(err).__name__}); each unit "
              "opens it itself", file=sys.stderr, flush=True)
