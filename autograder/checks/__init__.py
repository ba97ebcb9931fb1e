"""Checks: every graded part of the course, once: its points, fresh inputs, probe and judge.

Owns the table of checks and run parts (``registry``; the run parts by name alone, without
torch, for the steps that only read files: ``run_files``), the hidden checks' inputs and judges
(``hidden``: it also runs in nbgrader's grading kernel, so it imports only course_lib), the
numeric twins' judges on the solution's given values and 08 (b)'s hidden check (``twins``), the
runs' pass bars and audit tolerances (``bars``, ``bars.toml``), which training runs make each
run part (``run_chains``), and the hyperparameters the audit takes from a student's glue
(``hyperparameters``). The public checks' code is course_lib's (``course_lib.checks``): the
notebooks run it too. May import course_lib and ``autograder.inside`` (the probes); this
``__init__`` imports nothing, since the grading kernel imports the package.
"""
