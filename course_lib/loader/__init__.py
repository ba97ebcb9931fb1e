"""Notebooks loaded as modules, cell by cell as Run All runs them; nothing in here judges what they define.

``load`` loads a student's (or the solutions') notebooks, ``cell_shell`` is the IPython shell the cells run
in, ``grade_ids`` reads nbgrader's cell ids, ``time_limit`` bounds a cell. The runs, the grader's jobs and the
tests share this loader.
"""
