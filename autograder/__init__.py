"""The course's grader: never shipped to students. Its packages follow the life of a submission.

    units/           every step's per-student stage: one student's work in a process of its own, with limits
    collecting/      submitted/ -> a sanitised copy: files by name, no links or special files, ids, flags
    confinement/     the sandbox every piece of student code runs in (bubblewrap, cgroups, one job)
    inside/          what runs inside the sandbox: the job's entry, the probes, the wire back
    checks/          every graded part once: points, fresh inputs, probes' names, judges, bars
    grading/         the score of record: one student, a cohort on Dask, the audit
    exports/         grades.csv, reasons, Gradescope, nbgrader's gradebook, reports, similarity
    nbgrader_glue/   nbgrader's own autograde on the collected copies, in the confined kernel
    release/         the student copy
    __main__.py      the command line: python -m autograder grade|autograde|report|bundle|similarity|inbound
    cli_paths.py     the command line's paths, read against the folder it is typed in
    ownership.py     what a command run as root writes in the instructor's course folder stays the instructor's
Each package's docstring says what it owns and what it may import (tests/autograder/test_architecture.py).
"""

import course_lib  # noqa: E402,F401  (its import spares every grading process nbformat's slow optional import)
