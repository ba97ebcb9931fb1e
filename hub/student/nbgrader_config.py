"""nbgrader for a student on the hub: which course, and where its exchange is (set by hub/jupyterhub_config.py), and
what Validate says (course_lib.notebook.validate, as in `make student`'s student_jupyter/nbgrader_config.py)."""
import os

from autograder.nbgrader_glue.submit_check import CheckedSubmit, FolderCheck
from course_lib.notebook.validate import configure

c = get_config()  # noqa: F821 (provided by nbgrader)
configure(c)

# the course the exchange files this student's fetches and submissions under: the course's own id
c.CourseDirectory.course_id = os.environ.get("COURSE_ID", "attention-course")
# the exchange every user of the hub shares (tools/hub_setup.sh makes it, mode 1777 like /tmp)
c.Exchange.root = os.environ.get("COURSE_EXCHANGE", "/srv/nbgrader/exchange")
# submit and validate say beforehand which notebooks the grader cannot open, reads as Jupyter would save them, or takes
# from a renamed copy (autograder/nbgrader_glue/submit_check.py); validate says it once its kernel has started, after
# the empty written answers configure's hook names
c.ExchangeFactory.submit = CheckedSubmit
c.Execute.on_notebook_start = FolderCheck(c.Exchange.root, c.CourseDirectory.course_id,
                                          after=c.Execute.on_notebook_start)
