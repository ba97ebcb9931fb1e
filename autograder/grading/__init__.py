"""Grading: the score of record for one student and for a cohort.

Owns one student's grading (``grade``: the probe job judged here, the decode job for the run
parts, the per-student time budget, the recorded seed), one check graded in-process exactly as
a grading does (``one_check``, for the tests and benchmarks), a cohort (``cohort``: each student
one unit of ``autograder.units``, here or on Dask, re-runs by content hash), and the audit that
retrains sampled students' runs (``audit``). May import course_lib, ``autograder.collecting``,
``autograder.confinement``, ``autograder.checks``, ``autograder.inside`` (the wire),
``autograder.exports`` (to write its files) and ``autograder.units``.
"""
