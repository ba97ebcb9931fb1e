"""nbgrader's autograde the course's way: on the collected copies, in the confined kernel, on Dask.

Owns ``autograder autograde`` (``autograde``: the collect step into ``collected/``, one
student's nbgrader per unit, re-runs by hash), one student's nbgrader process
(``one_student``: ids set as values, SQLite sessions taking turns), the settings every
course's ``nbgrader_config.py`` applies (``setup``), the confined grading kernel (``kernel``,
``jupyter/kernels/course-grading``), nbgrader's exchange steps run the course's way (who handed a
submission in: ``inbound``; the collect: ``exchange``; listing and removing what it refused:
``refused_inbound``; the release of feedback: ``release_feedback``; the student's submit and validate, warned
beforehand about notebooks the grader cannot take as they are: ``submit_check``), what feedback pages show
(``feedback``: the score of record's reasons and total, never a hidden test's code) and nbgrader's export the
course's way (``export``: penalties as they stand, escaped cells, the LMS's columns). May import course_lib,
``autograder.collecting``, ``autograder.confinement``, ``autograder.checks``, ``autograder.grading``,
``autograder.exports``, ``autograder.inside``, ``autograder.units``, ``autograder.term`` (the late policy, the
LMS's names) and ``autograder.ownership`` (nbgrader run as root in the instructor's course folder leaves it
theirs).
"""
