"""course_lib's rooms are layered: each imports only the rooms below it, and no module imports itself back."""
from __future__ import annotations

from conftest import REPO
from import_graph import cycles, graph

ROOT = REPO / "course_lib"
# lowest first; a module may import its own layer and the layers below, never one above
LAYERS = (
    {"layout", "data_files", "seeds"},  # file names, data files and seeds: nothing of the course below them
    {"gpt"},  # the model and its training: knows no notebook, run or check
    {"loader"},  # notebooks loaded as modules: judges nothing
    {"presets", "contract", "run_specs", "runs", "world", "demo"},  # the named runs and the data they train on
    {"notebook"},  # what the given cells call
    {"checks"},  # what the test cells call
    {"__main__"},  # the command line
)
MAX_TOP_ENTRIES = 15


def _room(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


def _graph() -> dict[str, set[str]]:
    return graph(ROOT)


def _layer(room: str) -> int:
    return next(i for i, rooms in enumerate(LAYERS) if room in rooms)


def test_every_room_has_a_layer():
    """Is every file and folder at course_lib's top in exactly one layer, and are there at most 15 of them?"""
    entries = {p.stem if p.is_file() else p.name for p in ROOT.iterdir()
               if p.name != "__pycache__" and (p.is_dir() or p.suffix == ".py")} - {"__init__"}
    placed = set().union(*LAYERS)
    assert entries == placed, (entries - placed, placed - entries)
    assert len(entries) + 1 <= MAX_TOP_ENTRIES, sorted(entries)


def test_no_room_imports_a_room_above_it():
    """Does every module import only its own layer and the layers below (gpt knows no notebook, check or run)?"""
    wrong = [f"{module} imports {other}" for module, imported in _graph().items() if _room(module)
             for other in imported if _room(other) and _layer(_room(other)) > _layer(_room(module))]
    assert not wrong, wrong


def test_no_import_cycle():
    """Does no module of course_lib import itself back through others?"""
    assert not cycles(_graph())
