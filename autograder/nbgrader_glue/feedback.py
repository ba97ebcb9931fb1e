"""What feedback pages show: the score of record's reasons, the student's total, no hidden tests.

- ``TrustedReasons``: under every autograded cell (checks, hidden ones included, and the
  training runs' cells) the points and reason of ``autograder grade`` (its ``reasons.json``,
  the score of record, which ``--gradebook`` wrote into the gradebook), in place of what the
  student's kernel printed there; and, at the top of every page, the student's total for the
  assignment: the gradebook's, which ``nbgrader export`` writes (checks, runs and the written
  answers graded by hand).
- ``HideHiddenTestTracebacks``: nbgrader's ClearHiddenTests strips the hidden lines from a
  cell's source, but a failing hidden test's traceback (in the cell's outputs) still prints
  those lines; this keeps of such a cell's error only the exception's type and message.
- ``BoundedHTMLExporter``: each page is made in a unit of its own (``autograder.units``: a
  process forked from the grader's fork server, with a memory and a time limit), and only of a
  notebook within the collect step's size cap and a budget of JSON values. Rendering reads the
  student's bytes: bleach, which cleans their HTML, takes time quadratic in how deeply tags nest
  (300 KB of ``<div>`` take minutes), and a page's memory grows with its outputs. A page that
  fails or runs past its limits is that student's error, which nbgrader reports at the end;
  every other student's pages are made, and the instructor's process reads none of it. Before a
  student's first page it recomputes their late penalty from the points as they stand
  (``autograder.term.late``: the score of record and the manual points came after autograde).
  nbgrader asks for one page after another; when it asks for one, the exporter starts the student's
  next pages too, so that ``page_workers`` units work at once, and hands each out at its turn (its
  resources checked against those it was started with, else it is made again).
- ``with_summary``: nbgrader's generate_feedback (the command and formgrader's button) ends with the
  step's summary (``autograder.exports.step_summary``): each student whose page was not made, whose
  submission has no autograded copy to make pages of, who handed a notebook in late or not at all; it
  fails (non-zero) when a page a student should have is missing.
"""
from __future__ import annotations

import os
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

import nbformat
from nbconvert.exporters import HTMLExporter
from nbconvert.preprocessors import Preprocessor
from traitlets import Bool, Float, Int, Unicode
from traitlets.utils.importstring import import_item

from autograder.collecting.safe_files import shown
from autograder.exports.gradebook_preload import GRADEBOOK_PRELOAD, opened_first
from autograder.exports.step_summary import Problem, log_summary
from autograder.inside import bounded_json
from autograder.units.limits import UnitLimits
from autograder.units.stage import Step, preload
from autograder.units.unit import run_unit, start_fork_server

HIDDEN_MARK = "BEGIN HIDDEN TESTS"
MAX_NOTEBOOK_BYTES = 20 * 2 ** 20  # the collect step's cap on a notebook


class PageNotMade(Exception):
    """A feedback page its unit could not make (the reason: grader's words, no student text)."""


class BoundedHTMLExporter(HTMLExporter):
    """nbconvert's HTML exporter, each page made in a unit of its own, of a notebook within the size
    cap and the JSON value budget (refused unparsed past them)."""

    page_seconds = Float(60.0, help="wall time of one feedback page's unit; past it the page is not made").tag(
        config=True)
    page_memory_mb = Int(1024, help="memory one feedback page's unit may add to the grader's code").tag(config=True)
    page_workers = Int(0, help="a student's pages made side by side, in as many units at once (0: one per core "
                              "this process may use; 1: one page at a time)").tag(config=True)
    in_unit = Bool(False, help="set on the exporter a unit builds: render here").tag(config=False)

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.pages: dict[str, list[str]] = {}  # student -> notebooks whose pages were made, this run
        self.problems: list[Problem] = []  # what this run's summary says
        # pages started ahead of nbgrader's asking: notebook's absolute path -> (the resources it is made with, page)
        self._ahead: dict[str, tuple[dict, Future]] = {}
        self._pool: ThreadPoolExecutor | None = None  # the threads that wait on the pages' units

    def _create_environment(self):
        """nbconvert's jinja environment, with the compiled templates the fork server warmed (page_templates)."""
        from autograder.nbgrader_glue.page_templates import TEMPLATE_BYTECODE

        environment = super()._create_environment()
        environment.bytecode_cache = TEMPLATE_BYTECODE
        return environment

    def from_notebook_node(self, nb, resources=None, **kw):
        """nbconvert's page, its accessibility changes made without BeautifulSoup (``page_access``)."""
        from autograder.nbgrader_glue.page_access import without_soup

        if not self.in_unit:  # (a unit's exporter is alone in its process, as without_soup needs)
            return super().from_notebook_node(nb, resources, **kw)
        with without_soup(self.log):
            return super().from_notebook_node(nb, resources, **kw)

    def from_filename(self, filename, resources=None, **kw):
        """Render in a unit (or here, inside one); PageNotMade if the unit fails or refuses."""
        if self.in_unit:
            return super().from_filename(filename, resources, **kw)
        info = (resources or {}).get("nbgrader", {})
        if info.get("student") is not None and info["student"] not in self.pages:
            self._student_starts(info)
        try:
            made = self._page(filename, resources, **kw)
        except PageNotMade as err:
            if info.get("student") is not None:
                self.problems.append(Problem(info["student"], str(err), act=True))
            raise
        if info.get("student") is not None:
            self.pages[info["student"]].append(info.get("notebook", ""))
        return made

    def _student_starts(self, info: dict) -> None:
        """Before a student's first page: their penalty from the points as they stand, said if late."""
        from autograder.term.late import refresh_course

        self.pages[info["student"]] = []
        for late in refresh_course(info["db_url"], info["assignment"], self.config, {info["student"]}):
            shown_too = ", shown on their pages" if late.penalty else ""
            self.problems.append(Problem(late.student, late.line() + shown_too))

    def _pages_to_come(self, here: str, count: int) -> list[tuple[str, dict]]:
        """Up to ``count`` pages nbgrader's converter (the exporter's parent) will ask for after ``here``, of the same
        student's folder, each with the resources the converter will pass; none without a converter."""
        notebooks = [os.path.abspath(nb) for nb in getattr(self.parent, "notebooks", None) or []]
        resources_of = getattr(self.parent, "init_single_notebook_resources", None)
        if resources_of is None or here not in notebooks:
            return []
        return [(nb, resources_of(nb)) for nb in notebooks[notebooks.index(here) + 1:][:count]]

    def _started(self, path: str, resources) -> Future:
        """The page of ``path`` being made in its unit, by the exporter's ``page_workers`` threads."""
        step = Step("feedback page", UnitLimits(seconds=self.page_seconds, memory_mb=self.page_memory_mb,
                                                answer_mb=PAGE_ANSWER_MB), preload=PAGE_PRELOAD + PAGE_WARMUP)
        if self._pool is None:
            # the fork server of this process's first pages (PAGE_PRELOAD holds the gradebook's preload) opens their
            # gradebook before any page's unit
            start_fork_server(step.preload, opened_first((resources or {}).get("nbgrader", {}).get("db_url")))
            self._pool = ThreadPoolExecutor(max_workers=self._workers(), thread_name_prefix="feedback-page")
        preprocessors = [(f"{type(pp).__module__}.{type(pp).__qualname__}", bool(getattr(pp, "enabled", True)))
                         for pp in self._preprocessors]
        args = (self.config, preprocessors, path, resources, os.getcwd())
        # the exporter's own threads run the units (as stage's do for a step's places), one each
        return self._pool.submit(run_unit, make_page, args, step.limits, step.preload)

    def _workers(self) -> int:
        return max(1, self.page_workers or len(os.sched_getaffinity(0)))

    def _page(self, filename, resources, **kw):
        """One page: started ahead with these very resources, else started now; then the student's next pages are
        started, so that ``page_workers`` are made at once and no more are held."""
        here = os.path.abspath(filename)
        ahead = self._ahead.pop(here, None)
        if ahead is not None and ahead[0] == resources and not kw:
            page = ahead[1]
        else:
            if ahead is not None:  # started with other resources than nbgrader asks with: made again
                ahead[1].cancel()
            page = self._started(here, resources)
        later = [] if kw else self._pages_to_come(here, self._workers() - 1)
        kept = {path: self._ahead.pop(path, None) or (res, self._started(path, res)) for path, res in later}
        for _, dropped in self._ahead.values():  # not next: another student's, stopped by nbgrader at a failure
            dropped.cancel()
        self._ahead = kept
        outcome = page.result()
        why = outcome.failure if not outcome.ok else outcome.value if isinstance(outcome.value, str) else None
        if why:  # the unit failed, or refused the notebook unparsed
            raise PageNotMade(f"{shown(os.path.basename(filename))}: its feedback page was not made: {why}")
        return outcome.value


PAGE_ANSWER_MB = 256  # a page's HTML: a notebook within the 20 MB cap, its images inlined, escaped
# imported once in the fork server rather than in every page's unit; a module not installed (a
# gradebook driver) is skipped
PAGE_PRELOAD = ("autograder.nbgrader_glue.feedback", "autograder.exports.trusted_reasons", "autograder.term.late",
                "autograder.nbgrader_glue.page_access", "nbgrader.preprocessors", *GRADEBOOK_PRELOAD)
preload(*PAGE_PRELOAD)  # whichever step of this process starts the fork server
# rendered once in the fork server when a page's step starts it (not in every command that imports this module)
PAGE_WARMUP = ("autograder.nbgrader_glue.feedback_warmup",)


def _refusal(filename: str) -> str | None:
    """Why a notebook is refused unparsed (past the size cap or the JSON value budget), or None."""
    size = os.path.getsize(filename)
    if size > MAX_NOTEBOOK_BYTES:
        return f"it is larger than {MAX_NOTEBOOK_BYTES // 2 ** 20} MB"
    with open(filename, "rb") as f:
        if not bounded_json.within(f.read(MAX_NOTEBOOK_BYTES + 1), bounded_json.MAX_VALUES):
            return f"it holds more than {bounded_json.MAX_VALUES:,} JSON values"
    return None


def make_page(config, preprocessors: list[tuple[str, bool]], filename: str, resources: dict | None, cwd: str):
    """In the page's unit: the exporter nbgrader configured, rebuilt from its config with its
    preprocessors in order (each enabled as it was), renders one notebook; returns (html, resources)
    as ``from_filename`` does, or why the notebook is refused unparsed."""
    refusal = _refusal(filename)
    if refusal:
        return refusal
    os.chdir(cwd)  # the config's relative paths (reasons.json) are the course folder's
    exporter = BoundedHTMLExporter(config=config, in_unit=True)
    exporter._preprocessors = []
    for name, enabled in preprocessors:
        exporter.register_preprocessor(import_item(name), enabled=enabled)
    html, resources = exporter.from_filename(filename, resources=resources)
    # the template's helpers are functions, which cannot travel back from the unit
    return html, {key: value for key, value in resources.items() if not callable(value)}


def _summary_problems(converter, exporter: BoundedHTMLExporter) -> list[Problem]:
    """The run's problems, and the students of submitted/ without autograded pages to make, the notebooks
    a processed student has no page for."""
    from nbgrader.api import Gradebook, MissingEntry

    coursedir = converter.coursedir
    assignment = coursedir.assignment_id
    problems = list(exporter.problems)

    def students(directory: str) -> set[str]:
        found = Path(coursedir.format_path(directory, ".", ".")).glob(f"*/{assignment}")
        return {p.parent.name for p in found if p.is_dir()}

    autograded = students(coursedir.autograded_directory)
    handed_in = students(coursedir.submitted_directory)
    if coursedir.student_id not in ("", "*"):  # one student's pages (formgrader's per-student button)
        handed_in &= {coursedir.student_id}
    handed_in -= set(filter(None, coursedir.student_id_exclude.split(",")))
    for student in sorted(handed_in - autograded):
        problems.append(Problem(student, "no feedback pages: nothing of theirs was autograded (autograde_log.txt "
                                         "says why)", act=True))
    try:
        with Gradebook(coursedir.db_url, coursedir.course_id) as gb:
            notebooks = sorted(nb.name for nb in gb.find_assignment(assignment).notebooks)
    except MissingEntry:
        notebooks = []
    for student, made in exporter.pages.items():
        missing = [nb for nb in notebooks if nb not in made and not _failed(problems, student, nb)]
        if missing and made:
            problems.append(Problem(student, f"no page for {', '.join(missing)} (not in their autograded copy: "
                                             "not handed in, or nbgrader stopped on it)"))
    return problems


def _failed(problems: list[Problem], student: str, notebook: str) -> bool:
    return any(p.student == student and p.why.startswith(f"{shown(notebook)}.") for p in problems)


def with_summary(convert_notebooks):
    """nbgrader's GenerateFeedback.convert_notebooks, ending with the step's summary in its log and an
    error when a page a student should have is missing."""
    from functools import wraps

    @wraps(convert_notebooks)
    def convert(self):
        failed = None
        try:
            convert_notebooks(self)
        except Exception as err:  # nbgrader's own error at the end (a page not made): said after the summary
            failed = err
        if isinstance(self.exporter, BoundedHTMLExporter):
            problems = _summary_problems(self, self.exporter)
            if log_summary(self.log, "generate_feedback", problems) and failed is None:
                from nbgrader.converters.base import NbGraderException

                failed = NbGraderException("some students have no feedback pages: see the summary above")
        if failed is not None:
            raise failed

    convert.course_summary = True
    return convert


class TrustedReasons(Preprocessor):
    """Each autograded cell's trusted points and reason, and the student's total, on their page."""

    enabled = Bool(True).tag(config=True)  # nbconvert's preprocessors are off unless enabled
    reasons_file = Unicode("grades/reasons.json",
                           help="autograder grade's reasons.json, relative to the course folder").tag(config=True)

    def preprocess(self, nb, resources):
        """Replace graded cells' outputs with the verdicts; put the gradebook's total on top."""
        from nbgrader.api import Gradebook

        from autograder.exports import trusted_reasons

        info = resources["nbgrader"]
        # read per page: each page is a unit of its own
        mine = trusted_reasons.load(Path(self.reasons_file)).get(info["student"], {})
        for cell in nb.cells:
            meta = cell.metadata.get("nbgrader", {})
            verdict = mine.get(meta.get("grade_id"))
            if cell.cell_type == "code" and meta.get("grade") and verdict is not None:
                cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text=verdict.line() + "\n")]
        from autograder.term.late import late_text

        with Gradebook(info["db_url"]) as gb:
            submission = gb.find_submission(info["assignment"], info["student"])
            total, maximum, penalty = submission.score, submission.max_score, submission.late_submission_penalty
            late, extended = submission.total_seconds_late, submission.extension is not None
        if penalty:
            line = (f"**Your total for {info['assignment']}: {max(0.0, total - penalty):g} of {maximum:g} points**, "
                    f"after a late penalty of {penalty:g} (handed in {late_text(late)} after your due date"
                    f"{', your extension included' if extended else ''}; {total:g} before it): the autograded "
                    "checks, the training runs and the written answers graded by hand, as your course's grade export "
                    "holds it.")
        else:
            line = (f"**Your total for {info['assignment']}: {total:g} of {maximum:g} points**: the autograded "
                    "checks, the training runs and the written answers graded by hand, as your course's grade export "
                    "holds it.")
        line += " Each autograded cell below says what the course's grader gave it and why."
        nb.cells.insert(0, nbformat.v4.new_markdown_cell(line))
        return nb, resources


class HideHiddenTestTracebacks(Preprocessor):
    """Error outputs of cells holding hidden tests: type and message only."""

    enabled = Bool(True).tag(config=True)  # nbconvert's preprocessors are off unless enabled

    def preprocess_cell(self, cell, resources, index):
        """Cut a hidden-test cell's error tracebacks to type and message."""
        if cell.cell_type == "code" and HIDDEN_MARK in cell.source:
            for output in cell.get("outputs", []):
                if output.get("output_type") == "error":
                    output["traceback"] = [f"{output.get('ename', 'Error')}: {output.get('evalue', '')}"]
        return cell, resources
