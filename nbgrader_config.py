"""nbgrader configuration: solutions/ is the source, notebooks/ the student release."""
import os

from autograder.nbgrader_glue.setup import configure_grading
from autograder.term.lms import CANVAS_FILES, MOODLE_FILES  # noqa: F401 (the two LMSes' file names, below)

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

# Late work (docs/grading.md, "Due dates, late work and extensions"). The due date is the gradebook's:
# `nbgrader db assignment add a5 --duedate="2026-03-01 17:00:00 UTC"`; one student's extension:
# `python -m autograder extend a5 STUDENT --hours 48`. Work handed in after it loses, per notebook:
c.CourseLatePenalty.penalty_method = "none"  # none; zero (all of it); per_hour or per_day (`percent` per started unit)
c.CourseLatePenalty.percent = 10.0  # per_hour/per_day: percent of the points earned taken per started hour or day
c.CourseLatePenalty.cap_percent = 100.0  # per_hour/per_day: never more than this percent of the points earned
c.CourseLatePenalty.cutoff_hours = None  # later than this many hours: zero (None: no cut-off)
c.CourseLatePenalty.grace_minutes = 0.0  # lateness up to this is on time (an upload's delay)

# Hand-ins downloaded from an LMS (docs/grading.md, "From Canvas or Moodle"): `python -m autograder lms a5 DOWNLOAD`
# and `nbgrader zip_collect a5` read each file's whole path below the download with this regexp
c.LmsFileNames.named_regexp = CANVAS_FILES  # Moodle's download: MOODLE_FILES
