"""Code run in the sandbox with a student's notebooks: it loads them and applies them to the inputs.

Everything computed here shares an interpreter with untrusted code, so it
only ever returns raw outputs; the grader verifies them in its own process.
The notebooks run in a writable working folder of the job's own scratch
(``working_folder``), whose settings ``process_state`` puts back between them.
Importable as ``autograder.inside`` (the grader's side) and as ``inside``
(bound read-only at /grader/inside in the sandbox).
"""
