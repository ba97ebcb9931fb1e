"""Imported by the feedback pages' fork server only: renders one small page there (``page_templates.warm``),
so that every page's unit it forks starts with the templates compiled. A failure here costs only time."""
import sys

try:
    from autograder.nbgrader_glue.page_templates import warm

    warm()
except Exception as err:  # the pages are made cold, as before; said once in the fork server's stderr
    print(f"feedback pages: the fork server's warm-up failed ({type(err).__name__}); pages are made cold",
          file=sys.stderr, flush=True)
