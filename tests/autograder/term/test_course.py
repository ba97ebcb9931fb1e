"""The course's nbgrader config, as the term's commands and autograde read it."""
from __future__ import annotations

from autograder.term.course import course_db_url, course_source


def test_the_gradebook_url_comes_from_the_course_config(tmp_path):
    """Does the command use the db_url of the course's nbgrader_config.py, and nbgrader's default without one?"""
    assert course_db_url(tmp_path) == f"sqlite:///{tmp_path / 'gradebook.db'}"
    (tmp_path / "nbgrader_config.py").write_text("c = get_config()\nc.CourseDirectory.db_url = 'postgresql:///a5'\n")
    assert course_db_url(tmp_path) == "postgresql:///a5"


def test_the_source_folder_comes_from_the_course_config(tmp_path):
    """Is the assignment's source the config's source_directory, nbgrader's source/ without one or with a broken
    config?"""
    assert course_source(tmp_path, "a5") == tmp_path / "source" / "a5"
    (tmp_path / "nbgrader_config.py").write_text("c = get_config()\nc.CourseDirectory.source_directory = 'solutions'\n")
    assert course_source(tmp_path, "a5") == tmp_path / "solutions" / "a5"
    (tmp_path / "nbgrader_config.py").write_text("raise ValueError('broken')\n")
    assert course_source(tmp_path, "a5") == tmp_path / "source" / "a5"
