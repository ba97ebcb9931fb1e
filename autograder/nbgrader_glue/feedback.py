"""What nbgrader's feedback shows of a hidden test: that it failed and its message, never its code.

nbgrader's ClearHiddenTests strips the hidden lines from a cell's source, but a failing
hidden test's traceback (in the cell's outputs) still prints those lines. This
preprocessor, run before it in ``generate_feedback``, keeps of such a cell's error only
the exception's type and message (the checks' messages never give an answer away).
"""
from __future__ import annotations

from nbconvert.preprocessors import Preprocessor
from traitlets import Bool

HIDDEN_MARK = "BEGIN HIDDEN TESTS"


class HideHiddenTestTracebacks(Preprocessor):
    """Error outputs of cells holding hidden tests: type and message only."""

    enabled = Bool(True).tag(config=True)  # nbconvert's preprocessors are off unless enabled

    def preprocess_cell(self, cell, resources, index):
        if cell.cell_type == "code" and HIDDEN_MARK in cell.source:
            for output in cell.get("outputs", []):
                if output.get("output_type") == "error":
                    output["traceback"] = [f"{output.get('ename', 'Error')}: {output.get('evalue', '')}"]
        return cell, resources
