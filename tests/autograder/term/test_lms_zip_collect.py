"""`nbgrader zip_collect` with the course's plugins: an LMS's download into submitted/, or a clear error."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from lms_downloads import NB02, NB03, PARAMS, a5_zip, files_in, make_zip

from course_lib.layout import RELEASE_DIR


def _course(tmp_path: Path, regexp: str) -> Path:
    course = tmp_path / "course"
    (course / "release" / "a5").mkdir(parents=True)
    for name in (NB02, NB03):
        (course / "release" / "a5" / name).write_bytes((RELEASE_DIR / name).read_bytes())
    (course / "nbgrader_config.py").write_text(
        "from autograder.nbgrader_glue.setup import configure_grading\n"
        "from autograder.term.lms import CANVAS_FILES, MOODLE_FILES\n"
        "c = get_config()\nconfigure_grading(c)\n"
        f"c.LmsFileNames.named_regexp = {regexp}\n")
    (course / "downloaded" / "a5" / "archive").mkdir(parents=True)
    return course


def _zip_collect(course: Path) -> subprocess.CompletedProcess:
    env = dict(os.environ, PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
    return subprocess.run([sys.executable, "-m", "nbgrader", "zip_collect", "a5"], cwd=course, env=env,
                          capture_output=True, text=True, timeout=300)


def test_zip_collect_takes_a_canvas_download_with_a_students_zip(tmp_path):
    """Does nbgrader's zip_collect, with the course's regexp and extractor, put Canvas's loose files and a student's
    zip of a5/ (its second loose copy of 02 left out) into each student's submission?"""
    course = _course(tmp_path, "CANVAS_FILES")
    (course / "downloaded" / "a5" / "archive" / "submissions.zip").write_bytes(make_zip({
        f"doejane_LATE_1001_501_{NB02}": b"02 by jane", "roebob_1002_503_a5.zip": a5_zip("bob"),
        f"roebob_1002_504_{NB02}": b"loose 02 by bob"}))
    done = _zip_collect(course)
    assert done.returncode == 0, done.stderr[-3000:]
    assert files_in(course / "submitted" / "doejane" / "a5") == {NB02: b"02 by jane"}
    assert files_in(course / "submitted" / "roebob" / "a5") == {NB02: b"02 by bob", NB03: b"03 by bob",
                                                             f"outputs/{PARAMS}": b"params"}
    assert "left out: a second 02_finetune_without_pretraining.ipynb" in done.stderr


@pytest.mark.parametrize("regexp", ["r'(?P<name>[a-z]+)_attempt_(?P<file>.+)'", "MOODLE_FILES"])
def test_zip_collect_of_a_download_no_name_matches_fails_saying_why(tmp_path, regexp):
    """Does zip_collect stop with an error naming the regexp and the whole-path rule when no file matches (a regexp
    anchored at the file name, Canvas's names read as Moodle's), instead of collecting 0 files and succeeding?"""
    course = _course(tmp_path, regexp)
    (course / "downloaded" / "a5" / "archive" / "submissions.zip").write_bytes(
        make_zip({f"doejane_1001_501_{NB02}": b"02"}))
    done = _zip_collect(course)
    assert done.returncode != 0
    assert "must match each file's whole path below the download" in done.stderr, done.stderr[-3000:]
    assert not (course / "submitted").exists()
