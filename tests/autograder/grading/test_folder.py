"""The grade command's closing summary: refusals, students not graded, the collect step's notices, lateness."""
from __future__ import annotations

from autograder.collecting.collect import Refused
from autograder.grading.folder import FolderRun, grade_problems
from autograder.grading.results import SubmissionResult
from autograder.term.late import Lateness


def test_the_grade_summary_names_each_special_case():
    """Does the summary need the instructor for a refused folder, a student the grader could not grade and a trusted
    score the gradebook could not take, and only inform of a notice, lateness, and cells a smaller course lacks?"""
    run = FolderRun([SubmissionResult("ada"), SubmissionResult("bo"), SubmissionResult("cy")],
                    refused=[Refused(".hidden", "a hidden name")], failed=["bo"],
                    notices={"ada": ["took '05_synthesizer (1).ipynb' for 05_synthesizer.ipynb"]})
    notes = ["cy: not a student in the gradebook; trusted scores not written",
             "ada: 04_pretrain_then_finetune/04-x is not an autograded cell of a5; its trusted score was not written",
             "bo: 08_position_embeddings/08-y is not an autograded cell of a5; its trusted score was not written"]
    problems = grade_problems(run, notes, [Lateness("ada", 3600 * 3, 2.0, 20.0, 3600 * 3)])
    found = {(p.student, p.act) for p in problems}
    assert found == {("submitted/.hidden", True), ("bo", True), ("cy", True), ("ada", False), ("gradebook", False)}
    assert any("2 trusted score(s) for cells this course's gradebook does not have" in p.why for p in problems)
    assert any(p.why == "late by 3 h 0 min: penalty 2 of 20 point(s)" for p in problems)
