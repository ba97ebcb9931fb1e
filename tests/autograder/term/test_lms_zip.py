"""A student's zip opened safely: fuzzed hostile zips write only regular files, inside the folder, within limits."""
from __future__ import annotations

import io
import os
import stat
import zipfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from autograder.term.lms_zip import Budget, ZipLimits, entry_parts, extract
from autograder.units.limits import UnitLimits
from autograder.units.stage import Step, outcomes

pytestmark = pytest.mark.filterwarnings("ignore:Duplicate name")  # a hostile zip names an entry twice

LIMITS = ZipLimits(entries=20, file_bytes=3000, total_bytes=8000)
# names a hostile zip holds: out of the folder, absolute, Windows' forms, empty parts, odd characters, long ones
NAMES = st.one_of(
    st.sampled_from(["../x", "../../etc/cron.d/x", "/abs", "a/../../b", "C:\\x", "a\\..\\..\\b", "./a", "a//b",
                     "a/./b", "..", ".", "", "a/", "__MACOSX/._a", "a/b/c.ipynb", "x.zip", "é/ü.ipynb", "a\x00b",
                     "a" * 300, "outputs/p.params"]),
    st.text(alphabet=st.sampled_from("ab./\\_-:é"), min_size=1, max_size=12))
ENTRIES = st.lists(st.tuples(NAMES, st.integers(0, 5000), st.sampled_from(["file", "link", "fifo", "unix-file"])),
                   max_size=30)


def _hostile(entries) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, size, kind in entries:
            info = zipfile.ZipInfo(name or "_")
            info.filename = name  # as written, not normalised by ZipInfo
            if kind != "file":
                info.create_system = 3
                mode = {"link": stat.S_IFLNK, "fifo": stat.S_IFIFO, "unix-file": stat.S_IFREG}[kind]
                info.external_attr = (mode | 0o777) << 16
            zf.writestr(info, b"z" * size)
    return out.getvalue()


def _inside(dest: Path) -> None:
    """Everything under ``dest`` is a folder or a regular file, within the limits."""
    total = 0
    for folder, dirs, files in os.walk(dest):
        for name in dirs + files:
            st_ = os.lstat(os.path.join(folder, name))
            assert stat.S_ISDIR(st_.st_mode) or stat.S_ISREG(st_.st_mode), name
            if stat.S_ISREG(st_.st_mode):
                assert st_.st_size <= LIMITS.file_bytes
                total += st_.st_size
    assert total <= LIMITS.total_bytes


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(ENTRIES)
def test_a_fuzzed_zip_writes_only_regular_files_inside_within_limits(tmp_path_factory, entries):
    """Whatever names, kinds and sizes a zip's entries have, are only regular files written, all inside the folder,
    each and all within their caps, every other entry a note and never an exception?"""
    base = tmp_path_factory.mktemp("fuzz")
    dest = base / "student"
    dest.mkdir()
    notes: list[str] = []
    written = extract(io.BytesIO(_hostile(entries)), dest, lambda parts: "/".join(parts), Budget(LIMITS), notes,
                      "a5.zip")
    _inside(dest)
    assert sorted(os.listdir(base)) == ["student"]  # nothing next to it
    assert all((dest / rel).is_file() for rel in written) and len(written) <= LIMITS.entries
    assert all(len(note) < 500 for note in notes)


def test_entry_names_that_lead_out_are_refused():
    """Are absolute, drive-letter and '..' names refused, and Windows separators read as folders?"""
    assert [entry_parts(n) for n in ("../x", "/abs", "C:\\x", "a/../b")] == [None] * 4
    assert entry_parts("a\\b/./c.ipynb") == ["a", "b", "c.ipynb"]


def _bomb(path: str, dest: str) -> list[str]:
    notes: list[str] = []
    extract(path, Path(dest), lambda parts: "/".join(parts), Budget(ZipLimits()), notes, "a5.zip")
    return notes


def test_a_zip_bomb_stops_at_the_cap_within_its_units_memory(tmp_path):
    """Does a zip declaring small files that inflate to 512 MB each stop at the file cap, in a unit of 256 MB, with a
    note and nothing left of it?"""
    bomb = tmp_path / "bomb.zip"
    with zipfile.ZipFile(bomb, "w", zipfile.ZIP_DEFLATED) as zf:
        with zf.open("a5/outputs/vanilla.model.params", "w", force_zip64=True) as f:
            for _ in range(512):
                f.write(bytes(1 << 20))
    dest = tmp_path / "out"
    dest.mkdir()
    step = Step("lms hand-in", UnitLimits(seconds=120, memory_mb=256), preload=("autograder.term.lms_zip",))
    outcome, = outcomes(step, 1, lambda _: (_bomb, (str(bomb), str(dest))))
    assert outcome.ok, outcome.failure
    assert any("past the 64 MB limit of a file" in note for note in outcome.value)
    assert not any(p.is_file() for p in dest.rglob("*"))
