"""nbgrader's gradebook made ready in a fork server, for the units it forks that read the gradebook.

Imported only by fork servers (``gradebook_preload.GRADEBOOK_PRELOAD``). Each unit that reads the gradebook
(a feedback page, a student's report) is a process forked from its step's fork server; what the fork server
has not done, every unit does again. Importing ``nbgrader.api`` imports the ``nbgrader`` package, whose
``__init__`` imports its Jupyter server extensions (about 0.75 CPU-s); and SQLAlchemy sets up the
gradebook's mapped classes at a process's first query. Sampled with py-spy (issue 50 item 8), that import
was 84% of the samples of each student's report unit, and the set-up 7% of generate_feedback's.
"""
from nbgrader import api  # noqa: F401 (the classes configure_mappers sets up)
from sqlalchemy.orm import configure_mappers

configure_mappers()
