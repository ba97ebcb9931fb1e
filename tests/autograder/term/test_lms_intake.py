"""`python -m autograder lms`: Canvas's and Moodle's downloads into submitted/, each student's zip in their unit."""
from __future__ import annotations

import csv
from pathlib import Path

import pytest
from lms_downloads import NB02, NB03, PARAMS, a5_zip, files_in, make_zip

from autograder.__main__ import main


@pytest.fixture
def course(tmp_path, monkeypatch):
    (tmp_path / "course").mkdir()
    monkeypatch.chdir(tmp_path / "course")
    return tmp_path / "course"


def _intake(course: Path) -> dict[str, dict[str, str]]:
    with open(course / "lms_intake.csv", newline="") as f:
        return {r["student_id"]: r for r in csv.DictReader(f)}


def test_a_canvas_download_lands_in_submitted_with_the_late_mark_carried(course, tmp_path, capsys):
    """Do Canvas's loose files (one handed in again, '-1') and a student's zip of a5/ land as each student's submission,
    with Canvas's LATE mark and user id in lms_intake.csv, and does the summary name the late student?"""
    download = tmp_path / "submissions.zip"
    download.write_bytes(make_zip({
        f"doejane_LATE_1001_501_{NB02}": b"02 by jane", f"doejane_LATE_1001_502_{NB03.replace('.ipynb', '-1.ipynb')}":
        b"03 by jane", "roebob_1002_503_a5.zip": a5_zip("bob"),
        "roebob_1002_504_notes.txt": b"my notes"}))
    assert main(["lms", "a5", str(download), "--from", "canvas"]) == 0
    submitted = course / "submitted"
    assert files_in(submitted / "doejane" / "a5") == {NB02: b"02 by jane", NB03: b"03 by jane"}
    assert files_in(submitted / "roebob" / "a5") == {NB02: b"02 by bob", NB03: b"03 by bob", f"outputs/{PARAMS}":
                                                   b"params", "notes.txt": b"my notes"}
    rows = _intake(course)
    assert (rows["doejane"]["late"], rows["doejane"]["lms_user_id"], rows["roebob"]["late"]) == ("yes", "1001", "")
    said = capsys.readouterr().out
    assert "doejane: canvas marked it late (the course has no late penalty)" in said
    assert "2 student(s) of a5 from canvas" in said


def test_a_moodle_download_of_folders_lands_the_same(course, tmp_path):
    """Does Moodle's download (a folder per student, its files loose or a zip of a5/ in a folder of its own) land as
    each student's submission, named by the folder's full name, a second copy of a notebook left out?"""
    download = tmp_path / "moodle.zip"
    download.write_bytes(make_zip({
        "Jane Doe_77_assignsubmission_file_/a5.zip": a5_zip("jane", prefix="notebooks/a5/"),
        f"Jane Doe_77_assignsubmission_file_/{NB02}": b"loose 02",
        f"Bob Roe_78_assignsubmission_file_/{NB03}": b"03 by bob",
        "Bob Roe_78_assignsubmission_onlinetext_/onlinetext.html": b"<p>hi</p>"}))
    assert main(["lms", "a5", str(download), "--from", "moodle"]) == 1  # a file matching no name: look at it
    assert files_in(course / "submitted" / "Jane Doe" / "a5") == {NB02: b"02 by jane", NB03: b"03 by jane",
                                                               f"outputs/{PARAMS}": b"params"}
    assert files_in(course / "submitted" / "Bob Roe" / "a5") == {NB03: b"03 by bob"}


def test_an_unzipped_download_folder_works_and_links_are_never_followed(course, tmp_path):
    """Is a download already unzipped into a folder taken the same, a link in it (to a file outside) never read?"""
    download = tmp_path / "unzipped"
    download.mkdir()
    (download / f"doejane_1001_501_{NB02}").write_bytes(b"02 by jane")
    (tmp_path / "secret.txt").write_text("SECRET")
    (download / f"doejane_1001_502_{NB03}").symlink_to(tmp_path / "secret.txt")
    assert main(["lms", "a5", str(download), "--from", "canvas"]) == 0
    assert files_in(course / "submitted" / "doejane" / "a5") == {NB02: b"02 by jane"}


@pytest.mark.parametrize("regexp", [r"(?P<name>[a-z]+)_(?P<file>.+)\.ipynb$", None])
def test_a_regexp_matching_nothing_is_a_clear_error(course, tmp_path, capsys, regexp):
    """Is a download that no hand-in name matches (a regexp anchored at the file name, or Moodle's names read as
    Canvas's) an error that says the regexp must match the whole path and shows the first files, nothing written?"""
    download = tmp_path / "moodle.zip"
    download.write_bytes(make_zip({f"Jane Doe_77_assignsubmission_file_/{NB02}": b"02"}))
    argv = ["lms", "a5", str(download)] + (["--regexp", "^x(?P<name>y)(?P<file>z)$"] if regexp else
                                           ["--from", "canvas"])
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "must match each file's whole path below the download" in err and "Jane Doe_77_assignsubmission" in err
    assert not (course / "submitted").exists()


def test_a_hostile_zip_writes_only_its_own_regularfiles_in(course, tmp_path, capsys):
    """Does a student's zip holding a path out of the folder, an absolute path, a symbolic link, a zip inside it and
    Windows separators write only its regular files inside that student's submission, each left out thing said?"""
    hostile = make_zip({"../../escaped.txt": b"x", "/tmp/absolute.txt": b"x", "a5\\" + NB02: b"02 by eve",
                    "a5/inner.zip": make_zip({NB03: b"x"})}, links={f"a5/{NB03}": "/etc/passwd"})
    download = tmp_path / "submissions.zip"
    download.write_bytes(make_zip({"eve_1003_505_a5.zip": hostile, f"roebob_1002_503_{NB02}": b"02 by bob"}))
    assert main(["lms", "a5", str(download), "--from", "canvas"]) == 0
    assert files_in(course / "submitted" / "eve" / "a5") == {NB02: b"02 by eve"}
    assert not any(p.is_symlink() for p in course.rglob("*"))
    assert not list(tmp_path.rglob("escaped.txt")) and not Path("/tmp/absolute.txt").exists()
    said = capsys.readouterr().out
    assert "a name that leads outside the zip" in said and "a symbolic link" in said and "a zip inside the zip" in said


def test_two_lms_users_of_one_name_are_kept_apart(course, tmp_path, capsys):
    """Are two Canvas users whose files carry the same sortable name (two Jane Does) filed apart, each under the name
    and their own Canvas id, never mixed, and does the summary say why?"""
    download = tmp_path / "submissions.zip"
    download.write_bytes(make_zip({f"doejane_1001_501_{NB02}": b"first jane", f"doejane_1009_502_{NB02}":
                                   b"second jane"}))
    assert main(["lms", "a5", str(download), "--from", "canvas"]) == 0
    assert files_in(course / "submitted" / "doejane-1001" / "a5") == {NB02: b"first jane"}
    assert files_in(course / "submitted" / "doejane-1009" / "a5") == {NB02: b"second jane"}
    assert "another canvas user has the name doejane" in capsys.readouterr().out
