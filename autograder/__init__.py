"""The course's grader: never shipped to students. Its packages follow the life of a submission.

    units/           each step's per-student stage: one student's work in its own process, limited
    collecting/      submitted/ -> a sanitised copy (by name, no links or special files); ids, flags
    confinement/     the sandbox all student code runs in (bubblewrap, cgroups, one job)
    inside/          what runs inside the sandbox: the job's entry, the probes, the wire back
    checks/          every graded part once: points, fresh inputs, probes' names, judges, bars
    grading/         the score of record: one student, a cohort on Dask, the audit
    exports/         grades.csv, reasons, Gradescope, nbgrader's gradebook, reports, similarity
    nbgrader_glue/   nbgrader's own autograde on the collected copies, in the confined kernel
    release/         the student copy
    __main__.py      the CLI: python -m autograder grade|autograde|report|bundle|similarity|inbound
    cli_paths.py     the CLI's paths, read against the folder it is typed in
    early_start.py   what grade, autograde and report start before their own imports: fork server, templates
    ownership.py     what a root command writes in the instructor's folder stays the instructor's
Each package's docstring says what it owns and may import (tests/autograder/test_architecture.py).
"""

import course_lib  # noqa: E402,F401  (spares every grading process nbformat's slow optional import)
