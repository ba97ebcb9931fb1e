"""Notebooks loaded as modules, cell by cell as Run All runs them; nothing in here judges what they define.

``load`` loads a student's (or the solutions') notebooks, ``notebook_file`` reads a notebook file as Jupyter
reads it whichever editor saved it, ``cell_shell`` is the IPython shell the cells run in, ``grade_ids`` reads
nbgrader's cell ids, ``time_limit`` bounds a cell. The runs, the grader's jobs (and its collect step, which
writes each notebook as Jupyter saves it) and the tests share this loader.
"""
