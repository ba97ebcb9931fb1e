"""Release: what students are handed, the student copy (``bundle``). May import course_lib only."""
