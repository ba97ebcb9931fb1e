"""Imported by the feedback pages' fork server only: renders one small page there, so that every page's unit it forks
starts with the templates compiled (``page_templates``). A failure here costs only time."""
import sys

from autograder.nbgrader_glue.feedback import BoundedHTMLExporter
from autograder.nbgrader_glue.page_templates import feedback_config, warm_page

# what nbgrader's GetGrades leaves in the resources the feedback template reads
RESOURCES = {"nbgrader": {"notebook": "warm", "score": 1, "max_score": 1, "late_penalty": 0}}


def warm() -> None:
    """Render ``warm_page()`` as a feedback page, filling this process's template, lexer and regex caches."""
    BoundedHTMLExporter(config=feedback_config(), in_unit=True).from_notebook_node(
        warm_page(), {key: dict(value) for key, value in RESOURCES.items()})


try:
    warm()
except Exception as err:  # the pages are made cold, as before; said once in the fork server's stderr
    print(f"feedback pages: the fork server's warm-up failed ({type(err).__name__}); pages are made cold",
          file=sys.stderr, flush=True)
