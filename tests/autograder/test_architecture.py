"""The grader's folders show its pipeline: each package imports only what its docstring allows, and no module
imports itself back through others."""
from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

from conftest import REPO

ROOT = REPO / "autograder"
# package -> the grader's packages (and top-level modules) it may import; course_lib and libraries are free
ALLOWED = {
    "units": {"inside"},
    "collecting": {"checks", "inside", "units"},
    "confinement": {"inside"},
    "inside": set(),
    "checks": {"inside"},
    "exports": {"collecting", "checks", "inside", "units"},
    "grading": {"collecting", "confinement", "checks", "inside", "exports", "atomic", "units"},
    "nbgrader_glue": {"collecting", "confinement", "checks", "grading", "atomic", "inside", "units", "exports",
                      "ownership"},
    "release": set(),
}


def _module(path: Path) -> str:
    return ".".join(path.relative_to(REPO).with_suffix("").parts).removesuffix(".__init__")


def _imports(path: Path) -> set[str]:
    """The autograder modules a file imports (absolute and relative, at any depth of the file)."""
    found = set()
    package = _module(path).rsplit(".", 1)[0] if path.name != "__init__.py" else _module(path)
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join(package.split(".")[: len(package.split(".")) - node.level + 1] + ([base] if base else []))
            if base.startswith("autograder"):
                found |= {f"{base}.{a.name}" for a in node.names} | {base}
        elif isinstance(node, ast.Import):
            found |= {a.name for a in node.names if a.name.startswith("autograder")}
    modules = {_module(p) for p in ROOT.rglob("*.py")}
    return {m for m in found if m in modules}


def _graph() -> dict[str, set[str]]:
    return {_module(p): _imports(p) - {_module(p)} for p in ROOT.rglob("*.py") if "__pycache__" not in p.parts}


def _package(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


def test_each_package_imports_only_what_it_may():
    """Does every package import only the packages its docstring allows (collecting never runs student code, exports
    never import grading, the per-student units import nothing of the steps they run, the hidden checks the kernel
    loads import nothing of the grader's)?"""
    wrong = []
    for module, imported in _graph().items():
        package = _package(module)
        if package not in ALLOWED:
            continue
        for other in imported:
            other_package = _package(other)
            if other_package not in ("", package) and other_package not in ALLOWED[package]:
                wrong.append(f"{module} imports {other}")
            if other_package == "" and other not in ("autograder",) and other.split(".")[1] not in ALLOWED[package]:
                wrong.append(f"{module} imports {other}")
    assert not wrong, wrong


def test_no_import_cycle():
    """Does no module of the grader import itself back through others?"""
    graph = _graph()
    state: dict[str, int] = defaultdict(int)  # 0 unseen, 1 on the path, 2 done
    cycles = []

    def visit(node: str, path: list[str]) -> None:
        state[node] = 1
        for nxt in sorted(graph.get(node, ())):
            if state[nxt] == 1:
                cycles.append(path[path.index(nxt):] + [nxt] if nxt in path else [node, nxt])
            elif state[nxt] == 0:
                visit(nxt, path + [nxt])
        state[node] = 2

    for node in sorted(graph):
        if state[node] == 0:
            visit(node, [node])
    assert not cycles, cycles


def test_the_kernels_hidden_checks_import_nothing_of_the_graders():
    """Do the hidden checks the grading kernel mounts import nothing of autograder beyond themselves?"""
    from autograder.nbgrader_glue.kernel_sandbox import HIDDEN_CHECK_FILES

    mounted = {_module(ROOT / name) for name in HIDDEN_CHECK_FILES}
    for name in HIDDEN_CHECK_FILES:
        assert _imports(ROOT / name) <= mounted, (name, _imports(ROOT / name) - mounted)
