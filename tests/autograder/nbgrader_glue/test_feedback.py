"""Feedback pages made one unit each: a student's notebook that renders slowly or hugely stops only its own page;
a student's pages are made side by side."""
from __future__ import annotations

import os
import time
from pathlib import Path

import nbformat
import pytest
from traitlets.config import Config, Configurable

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


class _Converter(Configurable):
    """What nbgrader's converter offers its exporter (the exporter's parent): the folder's notebooks in the order it
    asks for their pages, and the resources it passes with each."""

    def __init__(self, notebooks: list[str], db_url: str):
        super().__init__()
        self.notebooks, self.db_url = notebooks, db_url

    def init_single_notebook_resources(self, path: str) -> dict:
        stem = os.path.splitext(os.path.basename(path))[0]
        return {"unique_key": stem, "output_files_dir": f"{stem}_files",
                "nbgrader": {"student": "ada", "assignment": "a5", "notebook": stem, "db_url": self.db_url}}


def _student(tmp_path, *cells_per_notebook) -> tuple[BoundedHTMLExporter, list[str], list]:
    """An exporter under a converter of one student's notebooks (a gradebook with the assignment); the units' asks."""
    from nbgrader.api import Gradebook

    from autograder.exports.gradebook_stamp import stamp_in_process

    stamp_in_process()
    url = f"sqlite:///{tmp_path / 'gradebook.db'}"
    with Gradebook(url) as gb:
        gb.add_assignment("a5")
    folder = tmp_path / "ada"
    folder.mkdir()
    paths = [_notebook(folder, f"{i:02d}.ipynb", *cells) for i, cells in enumerate(cells_per_notebook)]
    exporter = _exporter(page_workers=2)
    exporter.parent = _Converter(paths, url)
    return exporter, paths, []


def _counting(monkeypatch, started: list) -> None:
    """Record the notebook of each page whose unit is started, in the order the exporter starts them (its own thread
    asks; the pool's threads then run them side by side, in no set order)."""
    from autograder.nbgrader_glue import feedback

    real = feedback.BoundedHTMLExporter._started

    def counted(self, path, resources):
        started.append(Path(path).stem)
        return real(self, path, resources)

    monkeypatch.setattr(feedback.BoundedHTMLExporter, "_started", counted)


def test_a_students_pages_are_made_side_by_side_each_as_it_would_be_alone(tmp_path, monkeypatch):
    """When nbgrader asks for a page, is the student's next page started beside it (page_workers 2: two at once, no
    more), and is each handed out at its turn the very page made alone; is a page asked with other resources than
    foreseen made again?"""
    cells = [[nbformat.v4.new_markdown_cell(f"notes {i}: <b>attention</b>"), nbformat.v4.new_code_cell(f"print({i})")]
             for i in range(4)]
    exporter, paths, started = _student(tmp_path, *cells)
    resources = exporter.parent.init_single_notebook_resources
    alone = [_exporter().from_filename(path, resources=resources(path)) for path in paths[:3]]  # no converter above
    _counting(monkeypatch, started)
    made = [exporter.from_filename(paths[0], resources=resources(paths[0]))]
    assert started == ["00", "01"]
    made += [exporter.from_filename(path, resources=resources(path)) for path in paths[1:3]]
    assert started == ["00", "01", "02", "03"]
    for (html, made_resources), (html_alone, made_alone) in zip(made, alone):
        assert html == html_alone and made_resources["unique_key"] == made_alone["unique_key"]
    other = dict(resources(paths[3]), unique_key="renamed")
    html, made_resources = exporter.from_filename(paths[3], resources=other)
    assert started == ["00", "01", "02", "03", "03"] and made_resources["unique_key"] == "renamed"
    assert "notes 3" in html and exporter.pages == {"ada": ["00", "01", "02", "03"]}


def test_a_page_made_ahead_that_failed_fails_at_its_turn_alone(tmp_path, monkeypatch):
    """Of a student's pages made side by side, does the one refused by its unit fail when nbgrader asks for it, with
    its reason in the summary, while the pages before and after it are handed out, each made once?"""
    exporter, paths, started = _student(tmp_path, *([nbformat.v4.new_markdown_cell(f"page {i}")] for i in range(3)))
    with open(paths[1], "w") as f:  # past the JSON value budget: refused unparsed
        f.write('{"cells": [], "metadata": {"x": [' + ",".join(["0"] * 1_100_000) + ']}, "nbformat": 4, '
                '"nbformat_minor": 5}')
    _counting(monkeypatch, started)
    resources = exporter.parent.init_single_notebook_resources
    assert "page 0" in exporter.from_filename(paths[0], resources=resources(paths[0]))[0]
    with pytest.raises(PageNotMade, match=r"01\.ipynb: its feedback page was not made: it holds more than"):
        exporter.from_filename(paths[1], resources=resources(paths[1]))
    assert "page 2" in exporter.from_filename(paths[2], resources=resources(paths[2]))[0]
    assert started == ["00", "01", "02"]
    assert [(p.student, p.act) for p in exporter.problems] == [("ada", True)]


def test_the_first_page_starts_the_fork_server_told_the_pages_gradebook(tmp_path, monkeypatch):
    """Does the exporter's first page start the fork server with the pages' modules and, where nbgrader names the
    gradebook, what opens it ahead of the pages (told to the fork server alone), and no later page start it again?"""
    from autograder.exports.gradebook_preload import GRADEBOOK_PRELOAD, WARM_VARIABLE
    from autograder.nbgrader_glue import feedback
    from autograder.units.unit import Outcome

    started = []
    monkeypatch.setattr(feedback, "start_fork_server", lambda preload, environment: started.append(
        (preload, environment)))
    monkeypatch.setattr(feedback, "run_unit", lambda fn, args, limits, preload: Outcome("<html></html>"))
    exporter = _exporter()
    resources = {"nbgrader": {"db_url": "sqlite:////course/gradebook.db"}}
    for name in ("00.ipynb", "01.ipynb"):
        exporter._started(_notebook(tmp_path, name), resources).result()
    assert started == [(feedback.PAGE_PRELOAD + feedback.PAGE_WARMUP, {WARM_VARIABLE: "sqlite:////course/gradebook.db"})]
    assert set(GRADEBOOK_PRELOAD) <= set(started[0][0])  # gradebook_ready, which opens it, among them
    other = _exporter()
    other._started(_notebook(tmp_path, "02.ipynb"), {}).result()  # no gradebook named: the pages' modules only
    assert started[1:] == [(feedback.PAGE_PRELOAD + feedback.PAGE_WARMUP, {})]
