"""Collecting: every grading step reads a sanitised copy of each submission, never ``submitted/`` itself.

Owns reading a folder a student controls without following links or opening special files
(``safe_files``), which folder names are student ids (``student_ids``), the copy of each
submission's wanted files by name (``collect``), and the pairs across a cohort an instructor
should look at (``flags``). May import course_lib and ``autograder.checks`` (which run files a
submission is made of); nothing that runs student code.
"""
