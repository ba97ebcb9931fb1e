"""nbgrader configuration: solutions/ is the source, notebooks/ the student release."""
import os

from autograder.nbgrader_glue.setup import configure_grading

c = get_config()  # noqa: F821 (provided by nbgrader)

# the course is this file's folder, wherever nbgrader is started from: a server started in another folder
# would otherwise open (and make) a second, empty gradebook there; the gradebook is nbgrader's default,
# gradebook.db in the course folder
c.CourseDirectory.root = os.path.dirname(os.path.abspath(__file__))  # noqa: F821 (__file__: the config loader's)
c.CourseDirectory.course_id = "attention-course"
c.CourseDirectory.source_directory = "solutions"
c.CourseDirectory.release_directory = "notebooks"
c.CourseDirectory.submitted_directory = "submitted"
c.CourseDirectory.autograded_directory = "autograded"
c.CourseDirectory.feedback_directory = "feedback"

# what a blanked solution cell holds in the release
c.ClearSolutions.code_stub = {"python": "# YOUR CODE HERE\nraise NotImplementedError()"}
c.ClearSolutions.text_stub = "YOUR ANSWER HERE"
# the release never carries outputs (they could hold solution text)
c.ClearOutput.enabled = True
# validate and autograde run in the confined grading kernel (autograder/kernel.py): it sees
# only the notebook's own folder, the course library and the data folders, never the course
# folder, the gradebook or the answers. nbgrader's default per-cell timeout is 30 s; training
# cells load saved outputs while grading. The scores of record come from `autograder grade
# --gradebook`, which replaces what the students' kernels reported for the autograded cells.
configure_grading(c, timeout=120)
