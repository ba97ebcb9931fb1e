"""What nbgrader's feedback pages show: the score of record's reasons, the student's total, never a hidden test's code.

- ``TrustedReasons``: under every autograded cell (checks, hidden ones included, and the
  training runs' cells) the points and reason of ``autograder grade`` (its ``reasons.json``,
  the score of record, which ``--gradebook`` wrote into the gradebook), in place of what the
  student's kernel printed there; and, at the top of every page, the student's total for the
  assignment: the gradebook's, which ``nbgrader export`` writes (checks, runs and the written
  answers graded by hand).
- ``HideHiddenTestTracebacks``: nbgrader's ClearHiddenTests strips the hidden lines from a
  cell's source, but a failing hidden test's traceback (in the cell's outputs) still prints
  those lines; this keeps of such a cell's error only the exception's type and message.
- ``BoundedHTMLExporter``: a page is made only of a notebook within the collect step's size
  cap and a budget of JSON values, so one student's notebook cannot exhaust the instructor's
  process (nbgrader then reports that student and goes on with the others).
"""
from __future__ import annotations

import os
from pathlib import Path

import nbformat
from nbconvert.exporters import HTMLExporter
from nbconvert.preprocessors import Preprocessor
from traitlets import Bool, Unicode

from autograder.inside import bounded_json

HIDDEN_MARK = "BEGIN HIDDEN TESTS"
MAX_NOTEBOOK_BYTES = 20 * 2 ** 20  # the collect step's cap on a notebook


class BoundedHTMLExporter(HTMLExporter):
    """nbconvert's HTML exporter that refuses a notebook past the size cap or the JSON value budget, unparsed."""

    def from_filename(self, filename, resources=None, **kw):
        size = os.path.getsize(filename)
        if size > MAX_NOTEBOOK_BYTES:
            raise ValueError(f"{os.path.basename(filename)} is larger than {MAX_NOTEBOOK_BYTES // 2 ** 20} MB")
        with open(filename, "rb") as f:
            if bounded_json.count_values(f.read(MAX_NOTEBOOK_BYTES + 1), bounded_json.MAX_VALUES) is None:
                raise ValueError(f"{os.path.basename(filename)} holds more than {bounded_json.MAX_VALUES:,} JSON values")
        return super().from_filename(filename, resources, **kw)


class TrustedReasons(Preprocessor):
    """Each autograded cell's trusted points and reason, and the student's total, on their feedback page."""

    enabled = Bool(True).tag(config=True)  # nbconvert's preprocessors are off unless enabled
    reasons_file = Unicode("grades/reasons.json",
                           help="autograder grade's reasons.json, relative to the course folder").tag(config=True)
    _loaded = None  # (the file's path and time, what it holds)

    def preprocess(self, nb, resources):
        from nbgrader.api import Gradebook

        from autograder.exports import trusted_reasons

        info = resources["nbgrader"]
        path = Path(self.reasons_file)
        key = (str(path.resolve()), path.stat().st_mtime_ns if path.is_file() else None)
        if self._loaded is None or self._loaded[0] != key:  # one read per feedback run, not one per page
            self._loaded = (key, trusted_reasons.load(path))
        mine = self._loaded[1].get(info["student"], {})
        for cell in nb.cells:
            meta = cell.metadata.get("nbgrader", {})
            verdict = mine.get(meta.get("grade_id"))
            if cell.cell_type == "code" and meta.get("grade") and verdict is not None:
                cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text=verdict.line() + "\n")]
        with Gradebook(info["db_url"]) as gb:
            submission = gb.find_submission(info["assignment"], info["student"])
            total, maximum, penalty = submission.score, submission.max_score, submission.late_submission_penalty
        line = (f"**Your total for {info['assignment']}: {total:g} of {maximum:g} points**: the autograded checks, "
                "the training runs and the written answers graded by hand, as your course's grade export holds it"
                + (f" (less a late penalty of {penalty:g})" if penalty else "")
                + ". Each autograded cell below says what the course's grader gave it and why.")
        nb.cells.insert(0, nbformat.v4.new_markdown_cell(line))
        return nb, resources


class HideHiddenTestTracebacks(Preprocessor):
    """Error outputs of cells holding hidden tests: type and message only."""

    enabled = Bool(True).tag(config=True)  # nbconvert's preprocessors are off unless enabled

    def preprocess_cell(self, cell, resources, index):
        if cell.cell_type == "code" and HIDDEN_MARK in cell.source:
            for output in cell.get("outputs", []):
                if output.get("output_type") == "error":
                    output["traceback"] = [f"{output.get('ename', 'Error')}: {output.get('evalue', '')}"]
        return cell, resources
