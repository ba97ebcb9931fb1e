"""A term's calendar and intake: due dates, late work, extensions, and hand-ins from an LMS.

Owns the course's late-submission plugin for nbgrader (``late``: the policy, and each student's
penalty recomputed from the points as they stand, so the score of record and manual grades written
after nbgrader's autograde are penalised once, never undone or doubled), per-student extensions in
nbgrader's gradebook (``extensions``), the course's nbgrader config as the term's commands read it
(``course``), and the route from a Canvas or Moodle download into ``submitted/`` (``lms``, its file
names; ``lms_zip``, each student's zip extracted in that student's unit). May import
``autograder.collecting``, ``autograder.exports``, ``autograder.inside`` and ``autograder.units``.
"""
