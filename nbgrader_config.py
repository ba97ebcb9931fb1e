"""nbgrader configuration: solutions/ is the source, notebooks/ the student release."""
from pathlib import Path

from autograder.nbgrader_setup import configure_grading

c = get_config()  # noqa: F821 (provided by nbgrader)

c.CourseDirectory.course_id = "attention-course"
c.CourseDirectory.source_directory = "solutions"
c.CourseDirectory.release_directory = "notebooks"
c.CourseDirectory.submitted_directory = "submitted"
c.CourseDirectory.autograded_directory = "autograded"
c.CourseDirectory.feedback_directory = "feedback"
c.CourseDirectory.db_url = "sqlite:///gradebook.db"

# what a blanked solution cell holds in the release
c.ClearSolutions.code_stub = {"python": "# YOUR CODE HERE\nraise NotImplementedError()"}
c.ClearSolutions.text_stub = "YOUR ANSWER HERE"
# the release never carries outputs (they could hold solution text)
c.ClearOutput.enabled = True
# validate and autograde run in the memory-limited, unprivileged grading kernel;
# nbgrader's default per-cell timeout is 30 s; training cells load saved outputs while grading
# hidden from notebook code: the test answers, the gradebook, every submission. (The hidden
# tests compare with solutions/ inside the kernel, so it stays readable there; `autograder
# grade` re-checks the code in a sandbox that hides it.)
COURSE = Path(globals().get("__file__", "nbgrader_config.py")).resolve().parent
configure_grading(c, timeout=120, hidden_paths=[COURSE / "grader_only", COURSE / "gradebook.db", COURSE / "submitted"])
