"""The import graph of one of the course's packages, for the architecture tests: who imports whom, and cycles."""
from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

from conftest import REPO


def module_name(path: Path) -> str:
    """``autograder/checks/hidden.py`` -> ``autograder.checks.hidden`` (a package's ``__init__`` is the package)."""
    return ".".join(path.relative_to(REPO).with_suffix("").parts).removesuffix(".__init__")


def imports(path: Path, root: Path) -> set[str]:
    """The modules of the package at ``root`` that a file imports, absolute or relative, at any depth of the file."""
    prefix = root.name
    found = set()
    package = module_name(path).rsplit(".", 1)[0] if path.name != "__init__.py" else module_name(path)
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                kept = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(kept + ([base] if base else []))
            if base.startswith(prefix):
                found |= {f"{base}.{a.name}" for a in node.names} | {base}
        elif isinstance(node, ast.Import):
            found |= {a.name for a in node.names if a.name.startswith(prefix)}
    modules = {module_name(p) for p in root.rglob("*.py")}
    return {m for m in found if m in modules}


def graph(root: Path) -> dict[str, set[str]]:
    """module -> the package's modules it imports (itself left out)."""
    return {module_name(p): imports(p, root) - {module_name(p)} for p in root.rglob("*.py")
            if "__pycache__" not in p.parts}


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Every cycle a depth-first walk meets, as the path that closes it."""
    state: dict[str, int] = defaultdict(int)  # 0 unseen, 1 on the path, 2 done
    found = []

    def visit(node: str, path: list[str]) -> None:
        state[node] = 1
        for nxt in sorted(edges.get(node, ())):
            if state[nxt] == 1:
                found.append(path[path.index(nxt):] + [nxt] if nxt in path else [node, nxt])
            elif state[nxt] == 0:
                visit(nxt, path + [nxt])
        state[node] = 2

    for node in sorted(edges):
        if state[node] == 0:
            visit(node, [node])
    return found
