"""Grading code for the course: hidden checks run at grading time. Never shipped to students."""

import course_lib  # noqa: E402,F401  (its import spares every grading process nbformat's slow optional import)
