"""The check registry against the solution notebooks' nbgrader metadata: one set of points, one set of ids."""
from __future__ import annotations

import nbformat
from conftest import REPO, SOLUTIONS

from autograder.checks import registry, run_files
from autograder.checks.bars import load_bars


def _autograded_cells() -> dict[str, tuple[str, float]]:
    """grade_id -> (notebook, points) of every autograded test cell of the solutions."""
    cells = {}
    for path in sorted(SOLUTIONS.glob("*.ipynb")):
        for cell in nbformat.read(path, as_version=4).cells:
            meta = cell.metadata.get("nbgrader", {})
            if meta.get("grade") and not meta.get("solution") and cell.cell_type == "code":
                cells[meta["grade_id"]] = (path.stem, float(meta.get("points", 0)))
    return cells


def _run_cells() -> dict[str, tuple[str, float]]:
    """grade_id -> (notebook, points) of each run split's cell as the registry and bars.toml give them."""
    bars = {(b.part, b.split): b.points for b in load_bars("synthetic", "cpu")}
    return {grade_id: (notebook, float(bars[tuple(part.split("/"))]))
            for part, (notebook, grade_id) in run_files.RUN_CELLS.items()}


def test_every_autograded_cell_is_in_the_registry_with_its_points():
    """Does every autograded nbgrader cell have exactly one registry check or run split with the same notebook and
    points (a run cell's points are its split's in bars.toml)?"""
    registered = {c.grade_id: (c.notebook, float(c.points)) for c in registry.CHECKS}
    assert len(registered) == len(registry.CHECKS), "a grade_id is registered twice"
    runs = _run_cells()
    assert not set(runs) & set(registered) and len(runs) == 2 * len(run_files.RUN_PARTS)
    assert {**registered, **runs} == _autograded_cells()



def test_run_parts_match_the_bars_and_the_runs():
    """Do the run parts name files the runs write, need only registered checks, and have bars in every table?"""
    ids = {c.grade_id for c in registry.CHECKS}
    for part in run_files.RUN_PARTS:
        assert set(registry.needs(part)) <= ids, part
        assert part.params.endswith(".params") and part.dev.endswith(".predictions"), part
    bars = load_bars("synthetic", "cpu")
    assert {b.part for b in bars} == {p.name for p in run_files.RUN_PARTS}


def test_run_parts_need_every_check_of_the_code_they_run_hidden_ones_included():
    """Does each run part need every check, public and hidden, of each notebook whose code its runs call?"""
    runs_code = {"vanilla_nopretrain": {"02"}, "vanilla_pretrain": {"02", "03", "04"},
                 "synthesizer_pretrain": {"02", "03", "04", "05"}}
    for part in run_files.RUN_PARTS:
        want = {c.grade_id for c in registry.CHECKS if c.notebook[:2] in runs_code[part.name]}
        assert set(registry.needs(part)) == want, part.name
    assert "03-span-hidden" in registry.needs(next(p for p in run_files.RUN_PARTS if p.name == "vanilla_pretrain"))


def test_each_graded_part_has_one_name_everywhere():
    """Does every graded part name its public check file, its tests' files, the notebooks its checks are in and the
    run parts that need them, and every check a part?"""
    for part in registry.PARTS.values():
        assert (REPO / "course_lib" / "checks" / f"{part.name}.py").is_file(), part.name
        assert list((REPO / "tests").rglob(f"test_{part.name}.py")), part.name
        checks = [c for c in registry.CHECKS if c.part == part.name]
        assert {c.notebook[:2] for c in checks} == set(part.notebooks), part.name
        fed = {p.name for p in run_files.RUN_PARTS if set(p.code_of) & set(part.notebooks)}
        assert set(part.feeds) == fed, (part.name, fed)
    assert {c.part for c in registry.CHECKS} == set(registry.PARTS)
