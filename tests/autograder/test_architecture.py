"""The grader's folders show its pipeline: each package imports only what its docstring allows, and no module
imports itself back through others."""
from __future__ import annotations

from conftest import REPO
from import_graph import cycles, graph, imports, module_name

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
                      "ownership", "term"},
    "term": {"collecting", "exports", "inside", "units"},
    "release": set(),
}


def _graph() -> dict[str, set[str]]:
    return graph(ROOT)


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
    assert not cycles(_graph())


def test_the_kernels_hidden_checks_import_nothing_of_the_graders():
    """Do the hidden checks the grading kernel mounts import nothing of autograder beyond themselves?"""
    from autograder.nbgrader_glue.kernel_sandbox import HIDDEN_CHECK_FILES

    mounted = {module_name(ROOT / name) for name in HIDDEN_CHECK_FILES}
    for name in HIDDEN_CHECK_FILES:
        assert imports(ROOT / name, ROOT) <= mounted, (name, imports(ROOT / name, ROOT) - mounted)
