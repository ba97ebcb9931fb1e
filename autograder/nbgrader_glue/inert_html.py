"""The pages formgrader and feedback render from a submission hold no active HTML a student wrote.

A submission's markdown (``<img onerror=...>``), raw cells and outputs
(``display(HTML("<script>"))``) would otherwise run as script in the instructor's formgrader, with
the instructor's session, or in a feedback page. nbconvert's ``HTMLExporter.sanitize_html`` cleans
outputs only; nbgrader's formgrade template renders markdown without it. This preprocessor, on
HTMLExporter itself (so formgrader's exporter and generate_feedback's both run it), cleans the
markdown and raw cells' source with nbconvert's ``clean_html`` (bleach's allowlist: formatting
kept, scripts and event handlers dropped).
"""
from __future__ import annotations

from nbconvert.filters.strings import clean_html
from nbconvert.preprocessors import Preprocessor
from traitlets import Bool


class InertStudentHTML(Preprocessor):
    """Markdown and raw cells through bleach's allowlist; outputs are ``sanitize_html``'s."""

    enabled = Bool(True).tag(config=True)  # nbconvert's preprocessors are off unless enabled

    def preprocess_cell(self, cell, resources, index):
        """Clean a markdown or raw cell's source; leave others."""
        if cell.cell_type in ("markdown", "raw"):
            cell.source = clean_html(cell.source)
        return cell, resources
