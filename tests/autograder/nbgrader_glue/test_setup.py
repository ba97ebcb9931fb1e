"""nbgrader's autograde runs nbgrader's own steps, in nbgrader's order, with the course's put in place of three."""
from __future__ import annotations

from nbgrader.converters import Autograde
from nbgrader.preprocessors import DeduplicateIds, Execute, OverwriteCells
from traitlets.config import Config
from traitlets.utils.importstring import import_item

from autograder.nbgrader_glue.setup import AUTOGRADE_STEPS, SANITIZE_STEPS, configure_grading

# the course's step -> the nbgrader step it stands in for
IN_PLACE_OF = {"SplitCellIds": DeduplicateIds, "RestoreLockedCells": OverwriteCells, "CappedExecute": Execute}


def _as_nbgrader(steps: list[str]) -> list[type]:
    classes = [import_item(s) for s in steps]
    return [IN_PLACE_OF.get(c.__name__, c) for c in classes if c.__name__ != "OnlyCollectedCopies"]


def test_the_steps_are_nbgraders_own_with_three_in_place():
    """With the course's three steps put back and the collected-copies guard left out, are the lists nbgrader's
    defaults, in its order (so an nbgrader upgrade that changes them fails here)?"""
    traits = Autograde.class_traits()
    assert _as_nbgrader(SANITIZE_STEPS) == traits["sanitize_preprocessors"].default()
    assert _as_nbgrader(AUTOGRADE_STEPS) == traits["autograde_preprocessors"].default()


def test_the_collected_copies_guard_runs_first_and_every_step_imports():
    """Does the guard that refuses a notebook outside collected/ run before any other step, and does every step
    named import as a class?"""
    assert SANITIZE_STEPS[0].endswith("OnlyCollectedCopies")
    assert all(isinstance(import_item(s), type) for s in SANITIZE_STEPS + AUTOGRADE_STEPS)


def test_configure_grading_sets_the_declared_lists():
    """Does configure_grading give nbgrader's Autograde exactly the declared lists?"""
    c = Config()
    configure_grading(c)
    assert c.Autograde.sanitize_preprocessors == SANITIZE_STEPS
    assert c.Autograde.autograde_preprocessors == AUTOGRADE_STEPS


def test_a_wrong_late_policy_stops_autograde_before_it_starts(tmp_path):
    """Does the course's check before autograde name a late policy setting nbgrader's plugin would refuse, and pass the
    course's own config, whose plugins (late work, export, the LMS's names) all import?"""
    from autograder.nbgrader_glue.setup import course_grading_problem
    from course_lib.layout import REPO

    (tmp_path / "nbgrader_config.py").write_text(
        "from autograder.nbgrader_glue.setup import configure_grading\nc = get_config()\nconfigure_grading(c)\n"
        "c.CourseLatePenalty.penalty_method = 'per_week'\n")
    assert "late policy" in course_grading_problem(tmp_path) and "per_week" in course_grading_problem(tmp_path)
    assert course_grading_problem(REPO) is None
    c = Config()
    configure_grading(c)
    for name in (c.AssignLatePenalties.plugin_class, c.ExportApp.plugin_class, c.ZipCollectApp.collector_plugin,
                 c.ZipCollectApp.extractor_plugin):
        assert isinstance(import_item(name), type), name
