"""nbgrader's collect from the exchange: a student's links are never read through."""
from __future__ import annotations

import os
import socket

from nbgrader.coursedir import CourseDirectory
from traitlets.config import Config

from autograder.nbgrader_glue.exchange import LinkSafeCollect
from autograder.nbgrader_glue.setup import configure_grading

SECRET = b"Where was Laura Luserto born?\tZeliport\n"


def _collector(tmp_path) -> LinkSafeCollect:
    return LinkSafeCollect(coursedir=CourseDirectory(root=str(tmp_path / "course")))


def _inbound(tmp_path, monkeypatch):
    """An inbound submission made by hand: a notebook, a link to the grader's answers named like a run file, a
    link to a folder, a FIFO and a socket."""
    secret = tmp_path / "grader_only" / "birth_test.tsv"
    secret.parent.mkdir()
    secret.write_bytes(SECRET)
    src = tmp_path / "inbound" / "eve+a5+2026-11-26 10:00:00.000000 UTC+x1"
    (src / "outputs").mkdir(parents=True)
    (src / "03_span_corruption.ipynb").write_text('{"cells": []}')
    (src / "outputs" / "vanilla.pretrain.test.predictions").symlink_to(secret)
    (src / "peer").symlink_to(secret.parent)
    os.mkfifo(src / "04_pretrain_then_finetune.ipynb")
    server = socket.socket(socket.AF_UNIX)
    monkeypatch.chdir(src)  # a socket's path must be short: bound by a relative one
    server.bind("05_synthesizer.ipynb")
    return src, server


def test_collect_copies_links_as_links_and_leaves_special_files_out(tmp_path, monkeypatch):
    """Does collecting a hand-made inbound folder copy its notebook, keep its links as links (never the answers'
    bytes as a file), and leave out a FIFO and a socket without blocking?"""
    src, server = _inbound(tmp_path, monkeypatch)
    dest = tmp_path / "course" / "submitted" / "eve" / "a5"
    try:
        _collector(tmp_path).do_copy(str(src), str(dest))
    finally:
        server.close()
    assert (dest / "03_span_corruption.ipynb").read_text() == '{"cells": []}'
    assert (dest / "outputs" / "vanilla.pretrain.test.predictions").is_symlink() and (dest / "peer").is_symlink()
    assert sorted(p.name for p in dest.iterdir()) == ["03_span_corruption.ipynb", "outputs", "peer"]
    for path in dest.rglob("*"):
        assert path.is_symlink() or path.is_dir() or SECRET not in path.read_bytes(), path


def test_a_submission_folder_that_is_a_link_is_not_collected(tmp_path):
    """Is an inbound entry that links to another folder (a classmate's, the grader's) left uncollected?"""
    elsewhere = tmp_path / "grader_only"
    elsewhere.mkdir()
    (elsewhere / "birth_test.tsv").write_bytes(SECRET)
    link = tmp_path / "inbound" / "eve+a5+2026-11-26 10:00:00.000000 UTC+x2"
    link.parent.mkdir()
    link.symlink_to(elsewhere)
    dest = tmp_path / "course" / "submitted" / "eve" / "a5"
    _collector(tmp_path).do_copy(str(link), str(dest))
    assert not dest.exists()


def test_the_course_config_collects_with_it():
    """Does configure_grading make nbgrader's collect (the command and formgrader's button) this one?"""
    c = Config()
    environ = dict(os.environ)
    try:
        configure_grading(c)
    finally:
        os.environ.clear()
        os.environ.update(environ)
    assert c.ExchangeFactory.collect == "autograder.nbgrader_glue.exchange.LinkSafeCollect"
