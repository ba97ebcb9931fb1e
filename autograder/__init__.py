"""Grading code for the course: hidden checks run at grading time. Never shipped to students."""
