"""tools/hub_users_python.sh: each checkout builds its own users' tree, touches no other, and nothing in it leads
into the checkout."""
from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

from course_lib.layout import REPO

from .hub_server import machine

# what tools/hub_users_python.sh reads of a checkout
PARTS = ("tools", "hub", "course_lib", "autograder", "student_jupyter", "nbgrader_config.py")
OLD_SHARED = Path("/opt/attention-hub/python")  # where every checkout's setup used to write


def _build(checkout: Path) -> None:
    done = subprocess.run(["bash", "tools/hub_users_python.sh"], cwd=checkout, capture_output=True, text=True,
                          timeout=900)
    assert done.returncode == 0, f"{done.stdout[-2000:]}\n{done.stderr[-2000:]}"


def _state(tree: Path) -> dict[str, tuple]:
    """Every entry of ``tree`` by path: its inode, mode, size, modification time and (a link's) target (not its
    change time: a file hard-linked from .venv shares its inode, whose link count every build changes)."""
    found = {}
    for folder, dirs, files in os.walk(tree):
        for name in dirs + files:
            path = os.path.join(folder, name)
            st = os.lstat(path)
            found[path] = (st.st_ino, st.st_mode, st.st_size, st.st_mtime_ns,
                           os.readlink(path) if os.path.islink(path) else None)
    return found


def _checkout(tmp_path: Path, name: str) -> Path:
    """Another checkout of the course on this machine (its .venv that of this one), its course_lib marked as its own."""
    other = tmp_path / name
    for part in PARTS:
        source = REPO / part
        if source.is_dir():
            shutil.copytree(source, other / part, ignore=shutil.ignore_patterns("__pycache__", "node_modules"))
        else:
            shutil.copy(source, other / part)
    (other / ".venv").symlink_to(REPO / ".venv")
    (other / "course_lib" / "WHOSE").write_text(f"{name}\n")
    return other


def test_each_checkout_builds_its_own_tree_and_leaves_the_others(machine_ready, tmp_path):
    """With more checkouts on the machine, does each build its own tree (its own course code in it), and does
    building one leave every other tree (this checkout's too) and the old machine-wide path exactly as they were?"""
    one, two = _checkout(tmp_path, "one"), _checkout(tmp_path, "two")
    trees = {machine.users_tree(c): c for c in (one, two)}
    ours = machine.users_tree(REPO)
    assert len({ours, *trees}) == 3
    before = {tree: _state(tree) for tree in (ours, OLD_SHARED) if tree.exists()}
    try:
        _build(one)
        first = _state(machine.users_tree(one))
        _build(two)
        assert _state(machine.users_tree(one)) == first
        assert {tree: _state(tree) for tree in (ours, OLD_SHARED) if tree.exists()} == before
        for tree, checkout in trees.items():
            assert (tree / "course" / "course_lib" / "WHOSE").read_text().strip() == checkout.name
            assert (tree / "checkout").read_text().strip() == str(checkout.resolve())
    finally:
        for tree in trees:
            shutil.rmtree(tree, ignore_errors=True)


def test_nothing_in_the_users_tree_leads_into_the_checkout(machine_ready):
    """Does no link of the users' tree point into the checkout, no .pth or editable finder name it, and does the
    tree hold no solutions/, tests/ or .git?"""
    tree = machine.users_tree(REPO)
    for folder, dirs, files in os.walk(tree):
        for name in dirs + files:
            path = Path(folder, name)
            if path.is_symlink():
                assert not Path(os.path.realpath(path)).is_relative_to(REPO), (path, os.path.realpath(path))
    site = next(tree.glob("python/lib/python*/site-packages"))
    assert not list(site.glob("__editable__*"))
    assert not [p for p in site.glob("*.pth") if str(REPO) in p.read_text()]
    assert sorted(p.name for p in (tree / "course").iterdir() if p.name != ".fingerprint") == \
        ["autograder", "course_lib", "hub", "nbgrader_config.py", "student_jupyter"]
