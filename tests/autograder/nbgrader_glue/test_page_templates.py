"""The feedback pages' fork server warm-up: compiled templates kept, pages unchanged."""
from __future__ import annotations

import subprocess
import sys

import jinja2

from autograder.nbgrader_glue import feedback_warmup, page_templates
from autograder.nbgrader_glue.feedback import PAGE_PRELOAD, PAGE_WARMUP, BoundedHTMLExporter
from autograder.nbgrader_glue.feedback_warmup import RESOURCES


def _page(exporter: BoundedHTMLExporter) -> str:
    return exporter.from_notebook_node(page_templates.warm_page(), {k: dict(v) for k, v in RESOURCES.items()})[0]


def test_after_the_warm_up_a_new_pages_exporter_compiles_no_template(monkeypatch):
    """Once the warm-up has run, does the next page's exporter (a new jinja environment, as each unit builds) load
    nbgrader's feedback template compiled instead of compiling it again?"""
    feedback_warmup.warm()
    assert page_templates.TEMPLATE_BYTECODE.compiled
    compiled = []
    real = jinja2.Environment.compile
    monkeypatch.setattr(jinja2.Environment, "compile", lambda self, *a, **k: compiled.append(a) or real(self, *a, **k))
    _page(BoundedHTMLExporter(config=page_templates.feedback_config(), in_unit=True))
    assert compiled == []


def test_a_page_made_warm_is_the_page_made_cold(monkeypatch):
    """Is the HTML of a page rendered with the kept templates exactly that of one compiled from scratch?"""
    feedback_warmup.warm()
    warm = _page(BoundedHTMLExporter(config=page_templates.feedback_config(), in_unit=True))
    monkeypatch.setattr(page_templates, "TEMPLATE_BYTECODE", page_templates.TemplateBytecode())  # empty: compiles
    cold = _page(BoundedHTMLExporter(config=page_templates.feedback_config(), in_unit=True))
    assert warm == cold and "ValueError" in warm and "Warm" in warm


def test_the_warm_up_module_runs_in_a_fresh_interpreter_without_complaint():
    """Does importing what the pages' fork server imports (the step's preload, feedback_warmup last) render the warm-up
    page without the 'failed' line, and set up the gradebook's classes, so that the forked units really start warm
    (it once failed on the template's missing resources)?"""
    modules = PAGE_PRELOAD + PAGE_WARMUP
    done = subprocess.run([sys.executable, "-c", "import importlib, sys\n"
                           f"for name in {modules!r}:\n"
                           "    try:\n        importlib.import_module(name)\n"
                           "    except ImportError:\n        pass  # as the fork server: a driver not installed\n"
                           "from autograder.nbgrader_glue.page_templates import TEMPLATE_BYTECODE\n"
                           "from nbgrader.api import Grade\n"
                           "print(Grade.__mapper__.configured, len(TEMPLATE_BYTECODE.compiled))"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and "warm-up failed" not in done.stderr, done.stderr[-2000:]
    configured, compiled = done.stdout.split()[-2:]
    assert configured == "True" and int(compiled) > 0
