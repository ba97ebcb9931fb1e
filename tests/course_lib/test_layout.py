"""Tests for course_lib/layout.py: the course's folders and defaults."""
from __future__ import annotations

from course_lib import layout


def test_notebooks_copied_out_of_the_checkout_get_a_world_of_their_own(tmp_path):
    """Do notebooks inside the checkout use its world, and notebooks copied elsewhere one beside them, never the
    checkout's?"""
    assert layout.data_dir_for(layout.RELEASE_DIR) == layout.DEFAULT_DATA_DIR
    assert layout.data_dir_for(layout.REPO) == layout.DEFAULT_DATA_DIR
    assert layout.data_dir_for(tmp_path / "my-a5") == tmp_path / "my-a5" / "data" / "world"
