"""nbgrader for a student (`make student`, and a student's server on the hub, which reads this folder too):
what Validate says (course_lib.notebook.validate: each written answer left empty, each check message whole)."""
from course_lib.notebook.validate import configure

c = get_config()  # noqa: F821 (provided by nbgrader)
configure(c)
