"""nbgrader for a student on the hub: which course, and where its exchange is (set by hub/jupyterhub_config.py), and
what Validate says (course_lib.notebook.validate, as in `make student`'s student_jupyter/nbgrader_config.py)."""
import os

from course_lib.notebook.validate import configure

c = get_config()  # noqa: F821 (provided by nbgrader)
configure(c)

# the course the exchange files this student's fetches and submissions under: the course's own id
c.CourseDirectory.course_id = os.environ.get("COURSE_ID", "attention-course")
# the exchange every user of the hub shares (tools/hub_setup.sh makes it, mode 1777 like /tmp)
c.Exchange.root = os.environ.get("COURSE_EXCHANGE", "/srv/nbgrader/exchange")
