"""What the grading commands start before their own imports: the fork server and the sandboxes' templates.

``autograder grade`` and ``autograder autograde`` each import torch (and nbgrader), then their units' fork server
imports them again, then the first job or kernel waits while its template imports them a third time: three imports
of a few seconds, one after another, before the first student's work, on a machine with cores to spare (``report``:
two, of nbgrader's gradebook). Started here first, they share the cores (issue 50 item 8: benchmarks/FINDINGS.md).
"""
from __future__ import annotations

# what the grade, autograde and report commands' modules register for their fork servers (autograder.units.stage),
# named here so that each starts before they are imported (tests/autograder/test_early_start.py holds them equal)
GRADE_COMMAND_PRELOAD = ("autograder.collecting.cohort", "autograder.exports.outputs", "autograder.grading.cohort",
                         "autograder.grading.grade", "autograder.units.unit", "torch", "torch._dynamo")
AUTOGRADE_COMMAND_PRELOAD = ("IPython.paths", "autograder.collecting.cohort", "autograder.nbgrader_glue.autograde",
                             "autograder.nbgrader_glue.autograde_warmup", "autograder.nbgrader_glue.one_student",
                             "autograder.units.unit", "nbgrader.apps.autogradeapp", "torch")
REPORT_COMMAND_PRELOAD = ("autograder.exports.gradebook_ready", "autograder.exports.report", "autograder.units.unit",
                          "sqlalchemy.dialects.postgresql.psycopg2", "sqlalchemy.dialects.sqlite.pysqlite")


# the template helpers started (kept so that none is collected while it runs, which would warn; each ends in seconds)
_WARMING: list = []


def start_early(preload: tuple[str, ...], templates: list[tuple[tuple[str, ...], bool]],
                scheduler: str | None) -> None:
    """Where a command's units run here: start its fork server (``preload``) and its sandboxes' ``templates`` (preload,
    isolated) before it imports torch and nbgrader itself, so that their imports share the machine's cores rather than
    queue before the first student's."""
    if scheduler:  # the units run on the scheduler's workers, with fork servers and templates of their own
        return
    from autograder.confinement import template
    from autograder.units.unit import start_fork_server

    start_fork_server(preload)
    for modules, isolated in templates:
        _WARMING.append(template.warm(modules, isolated))
