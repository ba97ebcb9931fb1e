"""nbgrader's release_feedback, each student in a unit: one student's feedback folder cannot stop the class's."""
from __future__ import annotations

from pathlib import Path

import pytest
from nbgrader.coursedir import CourseDirectory
from nbgrader.exchange import ExchangeError
from nbgrader.utils import notebook_hash

from autograder.nbgrader_glue.release_feedback import UnitReleaseFeedback

A5 = "a5"
PAGES = ("03_span_corruption", "07_attention_exploration")


def _feedback(course: Path, student: str, secret: bytes | None) -> None:
    folder = course / "feedback" / student / A5
    folder.mkdir(parents=True)
    for page in PAGES:
        (folder / f"{page}.html").write_text(f"<p>{student}'s {page}</p>")
    (folder / "timestamp.txt").write_text("2026-11-20 10:00:00.000000 UTC")
    if secret is not None:
        (folder / "submission_secret.txt").write_bytes(secret)


def test_a_feedback_folder_without_its_secret_stops_nobody_else(tmp_path):
    """With one student's submission_secret.txt missing and another's a huge forged one, is everyone else's feedback
    released under nbgrader's names, and the release then fails naming exactly those two?"""
    course, exchange = tmp_path / "course", tmp_path / "exchange"
    exchange.mkdir()
    secrets = {"ada": b"a" * 128, "bo": b"b" * 128, "cy": b"c" * 128}
    for student, secret in secrets.items():
        _feedback(course, student, secret)
    _feedback(course, "eve", None)  # a forged folder: nbgrader submit never made it
    _feedback(course, "zed", b"z" * 10_000_000)
    release = UnitReleaseFeedback(coursedir=CourseDirectory(root=str(course), course_id="c", assignment_id=A5),
                                  authenticator=None, root=str(exchange))
    with pytest.raises(ExchangeError) as failed:
        release.start()
    assert "not of eve, zed" in str(failed.value) and "released the feedback of 3 student(s)" in str(failed.value)
    released = {p.name for p in (exchange / "c" / "feedback").iterdir()}
    wanted = {f"{notebook_hash(secret=s.decode(), notebook_id=page)}.html" for s in secrets.values() for page in PAGES}
    assert released == wanted
    for student, secret in secrets.items():
        page = exchange / "c" / "feedback" / f"{notebook_hash(secret=secret.decode(), notebook_id=PAGES[0])}.html"
        assert page.read_text() == f"<p>{student}'s {PAGES[0]}</p>"
