"""The per-student stage of every grading step: one student's bytes, one unit, one outcome.

Students are adversaries of each other: one student's files must never stop a step for the class or
change another student's result. So no step reads a student's bytes in its own process. It hands
each student's work to ``stage.run_step``, which runs it as a *unit* (``unit.run_unit``): a process
of its own, forked from a clean fork server, with a memory limit, a time limit and a cap on what it
hands back. Whatever goes wrong inside a unit (any exception, RecursionError and MemoryError
included, a file that vanished or cannot be read, a timeout, the process dying) comes back as that
student's ``Outcome`` with a reason; the step turns it into that student's row. The driver only
sees the units' small, typed values (hashes, copies' paths, grades, code text), never a submission.

``stage`` runs units on this machine (a few at once) or, for the grading steps, as tasks on Dask
distributed (``dask``: one student per task, a dead worker retried once), the unit then forked
inside the worker. JSON a student wrote is parsed within a value budget
(``autograder.inside.bounded_json``), so a parse costs a bounded multiple of its input.

May import nothing of the grader's but ``autograder.inside`` (the bounded JSON the wire shares).
"""
