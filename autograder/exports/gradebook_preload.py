"""What a step whose units read nbgrader's gradebook has its fork server import first (``gradebook_ready``).

Kept apart from ``gradebook_ready`` so that naming these modules imports none of them.
"""

# the module that readies the gradebook, and the database drivers a db_url may use (a driver that is not
# installed is skipped: the fork server passes over an ImportError)
GRADEBOOK_PRELOAD = ("autograder.exports.gradebook_ready", "sqlalchemy.dialects.sqlite.pysqlite",
                     "sqlalchemy.dialects.postgresql.psycopg2")
# the URL of the gradebook a fork server's units will open, which ``gradebook_ready`` opens first (in the fork
# server's environment only: ``autograder.units.unit.start_fork_server``)
WARM_VARIABLE = "COURSE_GRADEBOOK_TO_WARM"


def opened_first(url: str | None) -> dict[str, str]:
    """What a fork server that preloads ``GRADEBOOK_PRELOAD`` is told, to open the gradebook at ``url`` before its
    units (no URL: nothing)."""
    return {WARM_VARIABLE: url} if url else {}
