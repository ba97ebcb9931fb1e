"""The code a graded cell's answer runs: its statements, with what they call, wherever it stands.

A copy can keep its graded cell nearly empty: the answer's function calls a helper defined in a
later cell, a method is set on the class in the cell after it (``Dataset.__getitem__ = f``), the
cell is split in two. So a graded cell's row compares, beside the cell's own statements, every
statement of the student's code that defines or changes one of the names the release's cell
defines (its answers: ``finetune``, ``CharCorruptionDataset``, ``q_copy``, ...), and then, again
and again, every statement that defines or changes a global name those statements read. Names
come from ``symtable`` (the compiler's own scopes: a function's parameters and locals are not
global names; a comprehension's variable is its own), changes from ``ast`` (an attribute or item
set on a name, ``setattr(name, ...)``). Nothing is run.
"""
from __future__ import annotations

import ast
import symtable
from collections import defaultdict
from dataclasses import dataclass


@dataclass(frozen=True)
class Names:
    """What one top-level statement does to the notebook's global names."""

    defines: frozenset[str] = frozenset()  # names it binds, or changes (an attribute or item set on them)
    uses: frozenset[str] = frozenset()  # global names it reads, at the top level or in its functions and classes


def _scopes(table: symtable.SymbolTable):
    yield table
    for child in table.get_children():
        yield from _scopes(child)


def _changed(tree: ast.AST) -> set[str]:
    """Names an attribute or item is set on (``x.a = ...``, ``x[i] += ...``, ``setattr(x, ...)``)."""
    found = set()
    for node in ast.walk(tree):
        targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(
            node, (ast.AugAssign, ast.AnnAssign)) else []
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "setattr" and node.args:
            targets = [ast.Attribute(node.args[0], "", ast.Store())]
        for target in targets:
            while isinstance(target, (ast.Attribute, ast.Subscript)):
                target = target.value
                if isinstance(target, ast.Name):
                    found.add(target.id)
    return found


def names_of(statement: str) -> Names:
    """The global names one statement (as unparsed Python) defines, changes and reads; none if it is not Python."""
    try:
        top = symtable.symtable(statement, "<statement>", "exec")
        changed = _changed(ast.parse(statement))
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return Names()
    defines, uses = set(changed), set()
    for table in _scopes(top):
        for symbol in table.get_symbols():
            name = symbol.get_name()
            if table is top:
                if symbol.is_assigned() or symbol.is_imported():
                    defines.add(name)
                if symbol.is_referenced():
                    uses.add(name)
            elif symbol.is_global() and symbol.is_referenced():
                uses.add(name)
            elif symbol.is_declared_global() and symbol.is_assigned():
                defines.add(name)
    return Names(frozenset(defines), frozenset(uses))


def followed(names: list[Names], start: set[int], answers: frozenset[str]) -> list[int]:
    """The statements (indices into ``names``) a graded cell's answer runs: those of ``start`` (the cell's own), every
    one defining or changing a name of ``answers``, and every one defining or changing a name that any of those reads,
    transitively; in the student's order."""
    by_name: dict[str, list[int]] = defaultdict(list)
    for i, n in enumerate(names):
        for name in n.defines:
            by_name[name].append(i)
    kept = set(start)
    wanted = list(answers)
    seen: set[str] = set()
    for i in start:
        wanted += names[i].uses
    while wanted:
        name = wanted.pop()
        if name in seen:
            continue
        seen.add(name)
        for i in by_name.get(name, ()):
            if i not in kept:
                kept.add(i)
                wanted += names[i].uses
    return sorted(kept)


def defined_by(source_statements: list[str]) -> frozenset[str]:
    """The names a release cell's statements bind at the top level: the answers its graded cell must define."""
    top = set()
    for statement in source_statements:
        try:
            table = symtable.symtable(statement, "<statement>", "exec")
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            continue
        top |= {s.get_name() for s in table.get_symbols() if s.is_assigned() or s.is_imported()}
    return frozenset(top)
