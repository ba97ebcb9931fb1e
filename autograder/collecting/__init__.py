"""Collecting: every grading step reads a sanitised copy of each submission, never ``submitted/``.

Owns reading a folder a student controls without following links or opening special files
(``safe_files``), which folder names are student ids (``student_ids``), the copy of each
submission's wanted files by name (``collect``; ``cohort``: each student in a unit of its own; its
notebooks as Jupyter saves them and a missing one's renamed copy: ``notebook_copies``), the
hashes of each copy made in that unit (``prints``, ``run_prints``), and the pairs across a cohort an
instructor should look at (``flags``, ``near_copies``: from the prints alone). May import
course_lib, ``autograder.checks`` (which run files a submission is made of), ``autograder.units``
and ``autograder.inside`` (bounded JSON); nothing that runs student code.
"""
