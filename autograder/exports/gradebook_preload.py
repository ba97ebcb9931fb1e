"""What a step whose units read nbgrader's gradebook has its fork server import first (``gradebook_ready``).

Kept apart from ``gradebook_ready`` so that naming these modules imports none of them.
"""

# the module that readies the gradebook, and the database drivers a db_url may use (a driver that is not
# installed is skipped: the fork server passes over an ImportError)
GRADEBOOK_PRELOAD = ("autograder.exports.gradebook_ready", "sqlalchemy.dialects.sqlite.pysqlite",
                     "sqlalchemy.dialects.postgresql.psycopg2")
