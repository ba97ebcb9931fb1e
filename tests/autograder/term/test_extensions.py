"""`python -m autograder extend`: one student's extension in nbgrader's gradebook, their penalty recomputed."""
from __future__ import annotations

import datetime

import pytest
from gradebooks import late_work_gradebook
from nbgrader.api import Gradebook

from autograder.__main__ import main

pytestmark = pytest.mark.filterwarnings("ignore::sqlalchemy.exc.SAWarning")  # nbgrader's add_submission

DUE = datetime.datetime(2026, 3, 1, 17, 0)


@pytest.fixture
def course(tmp_path, monkeypatch):
    """A course folder: a late policy of 10% per started hour in its nbgrader_config.py, a gradebook where ada handed
    in 3 h after the due date (10 points) and bo handed in nothing yet."""
    (tmp_path / "nbgrader_config.py").write_text(
        "c = get_config()\n"
        "c.AssignLatePenalties.plugin_class = 'autograder.term.late.CourseLatePenalty'\n"
        "c.CourseLatePenalty.penalty_method = 'per_hour'\n"
        "c.CourseLatePenalty.percent = 10.0\n")
    late_work_gradebook(tmp_path, DUE, {"ada": DUE + datetime.timedelta(hours=3)})
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _held(course, student):
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:
        s = gb.find_submission("a5", student)
        return s.extension, s.late_submission_penalty


def test_an_extension_lifts_the_penalty_it_covers(course, capsys):
    """Does an extension covering the lateness clear the penalty in the gradebook and say the student's own due date;
    does a shorter one leave the rest of the lateness penalised; does no time at all take it away?"""
    assert main(["extend", "a5", "ada", "--hours", "2"]) == 0
    assert _held(course, "ada") == (datetime.timedelta(hours=2), 1.0)
    assert "ada: due 2026-03-01 19:00 UTC" in capsys.readouterr().out
    assert main(["extend", "a5", "ada", "--days", "1"]) == 0
    assert _held(course, "ada") == (datetime.timedelta(days=1), 0)
    said = capsys.readouterr().out
    assert "plus 1 d 0 h" in said and "handed in 2026-03-01 20:00 UTC, on time" in said
    assert main(["extend", "a5", "ada"]) == 0
    assert _held(course, "ada") == (None, 3.0)


def test_an_extension_before_any_hand_in_is_kept_for_autograde(course, capsys):
    """Can a student with no submission yet be given an extension (their gradebook row made, empty), which nbgrader's
    lateness then counts from?"""
    assert main(["extend", "a5", "bo", "--hours", "48"]) == 0
    assert "nothing handed in and autograded yet" in capsys.readouterr().out
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:
        submission = gb.update_or_create_submission("a5", "bo", timestamp=DUE + datetime.timedelta(hours=47))
        assert submission.extension == datetime.timedelta(hours=48) and submission.total_seconds_late == 0


@pytest.mark.parametrize("argv, said", [(["extend", "a6", "ada", "--hours", "1"], "no assignment a6"),
                                        (["extend", "a5", ".hidden", "--hours", "1"], "cannot be a student id"),
                                        (["extend", "a5", "ada", "--hours", "-1"], "cannot be negative")])
def test_an_extension_that_cannot_be_is_refused(course, capsys, argv, said):
    """Is an extension on an unknown assignment, for a name that cannot be an id, or of negative time refused with
    the reason, the gradebook unchanged?"""
    assert main(argv) == 2
    assert said in capsys.readouterr().err
    assert _held(course, "ada") == (None, 0)
