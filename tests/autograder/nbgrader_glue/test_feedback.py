"""Feedback pages made one unit each: a student's notebook that renders slowly or hugely stops only its own page."""
from __future__ import annotations

import time

import nbformat
import pytest
from traitlets.config import Config

from autograder.nbgrader_glue.feedback import BoundedHTMLExporter, PageNotMade

# 300 KB of nested <div>: bleach (which cleans a student's HTML) takes minutes over it, time quadratic in the nesting
NESTED_DIVS = "<div>" * 60_000


def _exporter(**limits) -> BoundedHTMLExporter:
    """The exporter as nbgrader's generate_feedback builds it from the course's config (HTML cleaned)."""
    config = Config()
    config.HTMLExporter.sanitize_html = True
    config.HTMLExporter.preprocessors = ["autograder.nbgrader_glue.inert_html.InertStudentHTML"]
    for name, value in limits.items():
        setattr(config.BoundedHTMLExporter, name, value)
    exporter = BoundedHTMLExporter(config=config)
    exporter.register_preprocessor("nbconvert.preprocessors.CSSHTMLHeaderPreprocessor", enabled=True)
    return exporter


def _notebook(tmp_path, name: str, *cells) -> str:
    path = tmp_path / name
    nbformat.write(nbformat.v4.new_notebook(cells=list(cells)), path)
    return str(path)


def test_a_page_that_renders_for_minutes_is_stopped_alone(tmp_path):
    """Is a page whose student HTML nests deeply enough to render for minutes stopped at its unit's time limit, with a
    reason naming the limit, and does the same exporter then make an honest student's page?"""
    bomb = _notebook(tmp_path, "bomb.ipynb", nbformat.v4.new_markdown_cell(NESTED_DIVS))
    honest = _notebook(tmp_path, "honest.ipynb", nbformat.v4.new_markdown_cell("My notes: <b>attention</b>"),
                       nbformat.v4.new_code_cell("print(1)"))
    exporter = _exporter(page_seconds=4.0)
    start = time.monotonic()
    with pytest.raises(PageNotMade, match=r"bomb\.ipynb: its feedback page was not made: stopped after 4 s"):
        exporter.from_filename(bomb, resources={})
    assert time.monotonic() - start < 30
    html, resources = exporter.from_filename(honest, resources={"unique_key": "honest"})
    assert "<b>attention</b>" in html and resources["unique_key"] == "honest"
    assert resources["output_extension"] == ".html"  # what nbgrader's writer needs comes back


def test_a_page_past_its_memory_is_that_pages_failure(tmp_path):
    """Does a page's unit have a memory limit: one too small to render any page fails that page as out of memory?"""
    page = _notebook(tmp_path, "page.ipynb", nbformat.v4.new_code_cell("print(1)"))
    with pytest.raises(PageNotMade, match="ran out of memory"):
        _exporter(page_memory_mb=1).from_filename(page, resources={})


def test_a_notebook_past_the_value_budget_is_refused_unparsed(tmp_path):
    """Is a notebook holding more JSON values than the budget refused by its unit, with the limit named?"""
    page = _notebook(tmp_path, "many.ipynb", nbformat.v4.new_code_cell("print(1)"))
    with open(page, "w") as f:  # a million and more tiny values, far below the size cap
        f.write('{"cells": [], "metadata": {"x": [' + ",".join(["0"] * 1_100_000) + ']}, "nbformat": 4, '
                '"nbformat_minor": 5}')
    with pytest.raises(PageNotMade, match="many.ipynb: its feedback page was not made: it holds more than 1,000,000"):
        _exporter().from_filename(page, resources={})


def test_the_feedback_summary_names_students_left_without_pages(tmp_path):
    """Does generate_feedback's summary need the instructor for a student handed in but never autograded (no page can
    be made), and say which notebooks a processed student got no page for?"""
    from types import SimpleNamespace

    from nbgrader.api import Gradebook
    from nbgrader.coursedir import CourseDirectory

    from autograder.exports.gradebook_stamp import stamp_in_process
    from autograder.nbgrader_glue.feedback import _summary_problems

    stamp_in_process()
    coursedir = CourseDirectory(root=str(tmp_path), assignment_id="a5")
    with Gradebook(coursedir.db_url) as gb:
        gb.add_assignment("a5")
        for name in ("02_finetune_without_pretraining", "03_span_corruption"):
            gb.add_notebook(name, "a5")
    for folder in ("submitted/ada", "submitted/bo", "autograded/ada"):
        (tmp_path / folder / "a5").mkdir(parents=True)
    exporter = _exporter()
    exporter.pages = {"ada": ["02_finetune_without_pretraining"]}
    problems = _summary_problems(SimpleNamespace(coursedir=coursedir), exporter)
    assert [(p.student, p.act) for p in problems] == [("bo", True), ("ada", False)]
    assert problems[1].why.startswith("no page for 03_span_corruption (not in their autograded copy")
