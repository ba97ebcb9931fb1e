"""Exports: what the graders write for the LMS, students, instructor and nbgrader's gradebook.

Owns grades.csv, reasons.json, flags.csv and the Gradescope files (``outputs``), CSV cells that
never start a formula (``csv_safe``), the bounded words a student reads back (``reasons``), the
trusted scores written into nbgrader's gradebook (``gradebook``), why each student lost points in
nbgrader's run (``report``), the closing summary every step prints (``step_summary``), and the
similarity report across a cohort (``similarity``, ``similarity_files``). May import course_lib,
``autograder.collecting`` and ``autograder.checks``; never ``autograder.grading`` (results come in
as values).
"""
