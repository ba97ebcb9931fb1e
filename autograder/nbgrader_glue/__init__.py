"""nbgrader's own autograde, run the course's way: on the collected copies, in the confined kernel, on Dask.

Owns ``autograder autograde`` (``autograde``: the collect step into ``collected/``, one
student's nbgrader per Dask task, re-runs by hash), one student's nbgrader process
(``one_student``: ids set as values, SQLite sessions taking turns), the settings every
course's ``nbgrader_config.py`` applies (``setup``), the confined grading kernel (``kernel``,
``jupyter/kernels/course-grading``) and what feedback pages show of hidden tests
(``feedback``). May import course_lib, ``autograder.collecting``, ``autograder.confinement``,
``autograder.checks``, ``autograder.grading.dask_tasks`` and ``autograder.ownership`` (nbgrader run as root in the
instructor's course folder leaves it theirs).
"""
