"""Feedback pages' compiled templates, kept in the fork server so that each page's unit starts warm.

Every feedback page is rendered in a unit of its own, forked from the grader's fork server
(``feedback.BoundedHTMLExporter``), and nbconvert builds a fresh jinja environment for every
exporter: cold, each page compiled nbgrader's feedback template again and Pygments' lexer rules
and the markdown filter's regular expressions with it, about half of a page's work.
``TEMPLATE_BYTECODE`` keeps the compiled templates for any environment that asks (jinja checks
each template's source checksum, so an edited template is compiled afresh), and ``feedback_warmup``
renders one small page of the same template so that the fork server holds them, and Pygments'
and ``re``'s caches, before it forks a page's unit (only the fork server imports ``feedback_warmup``);
what a unit adds to these caches dies with the unit.
"""
from __future__ import annotations

import jinja2
import nbformat

WARM_CELL = '''import torch


def f(x: int) -> float:
    """A docstring."""
    return [x ** 2 for x in range(3)][0] / 2.0  # a comment
'''


class TemplateBytecode(jinja2.BytecodeCache):
    """jinja's compiled templates by template, in this process's memory."""

    def __init__(self) -> None:
        self.compiled: dict[str, bytes] = {}  # jinja's bucket key (template name and file) -> its bytecode

    def load_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
        if bucket.key in self.compiled:
            bucket.bytecode_from_string(self.compiled[bucket.key])  # refused by jinja if the source changed

    def dump_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
        self.compiled[bucket.key] = bucket.bytecode_to_string()


TEMPLATE_BYTECODE = TemplateBytecode()


def feedback_config():
    """The config nbgrader's generate_feedback gives its exporter (the feedback template, nbgrader's template folders,
    no default preprocessors): nbgrader's own, so the warm-up compiles what the pages use."""
    from nbgrader.converters import GenerateFeedback

    return GenerateFeedback().config


def warm_page() -> nbformat.NotebookNode:
    """A notebook with one of each thing a feedback page shows: markdown, code, text, an error."""
    v4 = nbformat.v4
    code = v4.new_code_cell(WARM_CELL, outputs=[
        v4.new_output("stream", name="stdout", text="1.5\n"),
        v4.new_output("execute_result", data={"text/plain": "0.0"}, execution_count=1),
        v4.new_output("error", ename="ValueError", evalue="no", traceback=["\x1b[0;31mValueError\x1b[0m: no"])])
    code.metadata["nbgrader"] = {"grade": True, "grade_id": "warm", "points": 1, "solution": False, "locked": True,
                                 "score": 1, "comment": None}
    code.id = "warm-code"
    nb = v4.new_notebook(cells=[v4.new_markdown_cell("# Warm\n\nSome *text*, `code` and $x^2$.", id="warm-text"), code])
    nb.metadata["language_info"] = {"name": "python", "pygments_lexer": "ipython3"}
    return nb
