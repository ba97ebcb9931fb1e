"""The course's late policy (nbgrader's LateSubmissionPlugin), the penalty recomputed from the scores as they stand."""
from __future__ import annotations

import datetime

import pytest
from gradebooks import late_work_gradebook
from hypothesis import given, settings
from hypothesis import strategies as st
from nbgrader.api import Gradebook
from traitlets.config import Config

from autograder.term.late import (
    CourseLatePenalty,
    Lateness,
    LatePolicy,
    late_plugin,
    late_text,
    policy_problem,
    policy_share,
    refresh_course,
    refresh_penalties,
)

pytestmark = pytest.mark.filterwarnings("ignore::sqlalchemy.exc.SAWarning")  # nbgrader's add_submission

HOUR = 3600.0
NB = "03_span_corruption"
DUE = datetime.datetime(2026, 3, 1, 17, 0)

policies = st.builds(LatePolicy, method=st.sampled_from(["none", "zero", "per_hour", "per_day"]),
                     percent=st.floats(0, 200), cap_percent=st.floats(0, 100),
                     cutoff_hours=st.none() | st.floats(0, 1000), grace_minutes=st.floats(0, 120))


@settings(max_examples=300, deadline=None)
@given(policies, st.floats(0, 1000), st.floats(0, 90 * 86400), st.floats(0, 90 * 86400))
def test_a_penalty_is_within_the_points_and_grows_with_lateness(policy, score, early, later):
    """Is every penalty between 0 and the points earned, no larger for work handed in earlier, and none within the
    grace period or under the 'none' method?"""
    early, later = sorted((early, later))
    first, second = policy.penalty(score, early), policy.penalty(score, later)
    assert 0 <= first <= second <= score
    if early <= policy.grace_minutes * 60 or policy.method == "none":
        assert first == 0


def test_each_method_takes_what_its_settings_say():
    """Does per_day take its percent per started day up to the cap, per_hour per started hour, a cut-off everything,
    and zero everything once late?"""
    per_day = LatePolicy("per_day", percent=10, cap_percent=30)
    assert [per_day.penalty(50, s) for s in (0, 1, 86400, 86401, 5 * 86400)] == [0, 5, 5, 10, 15]
    per_hour = LatePolicy("per_hour", percent=2, cutoff_hours=48, grace_minutes=10)
    assert [per_hour.penalty(50, s) for s in (600, 601, 2 * HOUR, 48 * HOUR, 48 * HOUR + 1)] == [0, 1, 2, 48, 50]
    assert LatePolicy("zero").penalty(50, 1) == 50 and LatePolicy("none").penalty(50, 1e9) == 0


@pytest.mark.parametrize("settings, word", [(dict(method="weekly"), "method"), (dict(percent=-1), "percent"),
                                            (dict(cap_percent=150), "cap_percent"),
                                            (dict(cutoff_hours=float("nan")), "cutoff_hours")])
def test_a_wrong_setting_is_refused_by_name(settings, word):
    """Is a policy with a wrong setting refused with that setting's name?"""
    with pytest.raises(ValueError, match=word):
        LatePolicy(**settings)


def test_the_plugin_is_configured_from_nbgrader_config():
    """Does nbgrader's AssignLatePenalties, configured as the course does, build the course's plugin with the policy's
    typed settings, and is a wrong one named before any grading?"""
    config = Config()
    config.AssignLatePenalties.plugin_class = "autograder.term.late.CourseLatePenalty"
    config.CourseLatePenalty.penalty_method = "per_hour"
    config.CourseLatePenalty.percent = 5.0
    plugin = late_plugin(config)
    assert isinstance(plugin, CourseLatePenalty) and plugin.late_submission_penalty("ada", 40, 2 * HOUR) == 4
    assert policy_problem(config) is None
    config.CourseLatePenalty.cap_percent = 120.0
    assert "cap_percent" in policy_problem(config)
    config.CourseLatePenalty.cap_percent = "lots"
    assert "late policy" in policy_problem(config)


@settings(max_examples=200, deadline=None)
@given(policies, st.floats(1, 90 * 86400), st.floats(0, 1000))
def test_the_share_autograde_names_is_the_penalty_the_points_will_get(policy, seconds, points):
    """For any setting of the course's policy, is the share autograde's summary names (before any points are given)
    the penalty the grade step then takes from whatever points the work earns?"""
    plugin = CourseLatePenalty(penalty_method=policy.method, percent=policy.percent, cap_percent=policy.cap_percent,
                               cutoff_hours=policy.cutoff_hours, grace_minutes=policy.grace_minutes)
    share = policy_share(plugin, "ada", seconds)
    assert share is not None
    assert share * points == pytest.approx(plugin.late_submission_penalty("ada", points, seconds), abs=1e-6)


def test_autograde_names_the_share_or_says_the_penalty_comes_with_the_points():
    """Does autograde's line for a late student say the policy's share, 'no penalty' when it takes none or an extension
    covers them, and for a plugin whose penalty is no share of the points, that it is computed from the grade's?"""
    class PerDayPoints:  # a course's own plugin: 2 points a started day, whatever was earned
        def late_submission_penalty(self, student_id, score, total_seconds_late):
            return min(score, 2.0 * -(-total_seconds_late // 86400))

    late = Lateness("ada", seconds_late=5400, penalty=0.0, raw_score=0.0, past_due=5400)
    per_hour = CourseLatePenalty(penalty_method="per_hour", percent=10.0)
    assert late.line_before_record(policy_share(per_hour, "ada", 5400)) == (
        "late by 1 h 30 min: the late policy takes 20% of the points the course's grader gives them")
    assert late.line_before_record(policy_share(CourseLatePenalty(), "ada", 5400)) == "late by 1 h 30 min: no penalty"
    assert "computed from the points `autograder grade --gradebook` gives" in late.line_before_record(
        policy_share(PerDayPoints(), "ada", 5400))
    nbgraders = late_plugin(Config())  # nbgrader's own plugin: no penalty unless set to zero late work
    assert policy_share(nbgraders, "ada", 5400) == 0.0
    extended = Lateness("bo", seconds_late=0, penalty=0.0, raw_score=0.0, past_due=3 * HOUR)
    assert extended.line_before_record(0.0) == extended.line() == (
        "handed in 3 h 0 min after the due date, within their extension: no penalty")


def test_late_text_reads_as_a_person_would_say_it():
    """Are lateness times given in the largest units a person would use?"""
    assert [late_text(s) for s in (40, 300, 3900, 2 * 86400 + 7300)] == ["40 s", "5 min", "1 h 5 min", "2 d 2 h"]


def _policy(**settings) -> Config:
    config = Config()
    config.AssignLatePenalties.plugin_class = "autograder.term.late.CourseLatePenalty"
    for name, value in settings.items():
        setattr(config.CourseLatePenalty, name, value)
    return config


def test_the_penalty_follows_the_scores_as_they_stand(tmp_path):
    """After the kernel's score was penalised, do new points (the score of record, a manual grade) get the policy's
    share taken once, not the old penalty kept or taken twice; is on-time work untouched; does an extension that
    covers the lateness lift the penalty?"""
    url = late_work_gradebook(tmp_path, DUE, {"ada": DUE + datetime.timedelta(hours=3),
                                              "bo": DUE - datetime.timedelta(hours=1)})
    config = _policy(penalty_method="per_hour", percent=10)
    late = refresh_course(url, "a5", config)
    assert [(x.student, x.penalty, x.raw_score) for x in late] == [("ada", 3, 10)]
    assert "late by 3 h 0 min: penalty 3 of 10 point(s)" == late[0].line()
    with Gradebook(url) as gb:  # the trusted score and a manual grade come later
        gb.find_grade("03-span-hidden", NB, "a5", "ada").auto_score = 20
        gb.find_grade("03-written", NB, "a5", "ada").manual_score = 4
        gb.db.commit()
    assert [(x.penalty, x.raw_score) for x in refresh_course(url, "a5", config)] == [(7.2, 24)]
    with Gradebook(url) as gb:
        assert gb.find_submission("a5", "ada").late_submission_penalty == pytest.approx(7.2)
        assert gb.find_submission("a5", "bo").late_submission_penalty == 0
        gb.grant_extension("a5", "ada", hours=4)
        assert [(x.student, x.seconds_late) for x in refresh_penalties(gb, "a5", late_plugin(config))] == [("ada", 0)]
        gb.db.commit()
        assert gb.find_submission("a5", "ada").late_submission_penalty == 0
