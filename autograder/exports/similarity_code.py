"""A cell's code as the similarity report compares it: top-level statements, wherever code hides.

A copy need not stay where the release put its cell, nor look like code: it can move to a
cell of its own, run through ``exec('...')``, hide in ``%%capture`` or ``%time`` (which IPython
turns into strings), or have its statements reordered. So a cell's source is turned into
Python by IPython's own transformer (magics become calls whose arguments are strings), parsed
with ``ast`` (never run), and split into its top-level statements, each unparsed (comments and
layout gone). Every string literal that parses as Python statements, beyond a lone name or
number, is unwrapped the same way and its statements added: ``exec``, ``eval`` and ``compile``
arguments and magics' code included, however they are spelled or reached. The report then
fingerprints each statement on its own, so where a statement stands (which cell, which order)
never counts. All of it is bounded: a budget of characters per student parsed, strings nested
at most ``MAX_DEPTH`` deep.
"""
from __future__ import annotations

import ast
from dataclasses import dataclass, field

from IPython.core.inputtransformer2 import TransformerManager

MAX_DEPTH = 4  # strings within strings unwrapped (exec of an exec of ...); deeper ones stay strings
RUNTIME_CODE = frozenset({"exec", "eval", "compile"})  # builtins that run a string's code
# a string that parses only as one of these is text, not code
_TRIVIAL = (ast.Name, ast.Constant, ast.Attribute)


@dataclass
class Budget:
    """Characters of one student's code still to parse: each cell and each unwrapped string pays."""

    left: int  # characters still to spend
    spent_out: bool = False  # something was left out because the budget ran out

    def pay(self, text: str) -> bool:
        """Whether ``text`` may be parsed; once one text is refused, every later one is too."""
        if self.spent_out or len(text) > self.left:
            self.spent_out = True
            return False
        self.left -= len(text)
        return True


@dataclass
class Statements:
    """A cell's code as compared: its top-level statements, then those of its strings."""

    texts: list[str] = field(default_factory=list)  # each statement unparsed (else its raw text)
    runtime: int = 0  # exec/eval/compile calls on code built at run time: not compared


def _python(source: str) -> str:
    """IPython's syntax (magics, ``!``, ``?``) as the Python it runs; else the source itself."""
    try:
        return TransformerManager().transform_cell(source)
    except Exception:  # a cell IPython could not run either: compared as text
        return source


def _constant_text(node: ast.AST) -> str | None:
    """A string (or bytes) literal's text, folding ``'a' + 'b'``; None if computed at run time."""
    if isinstance(node, ast.Constant) and isinstance(node.value, (str, bytes)):
        value = node.value
        return value if isinstance(value, str) else value.decode("utf-8", "replace")
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = _constant_text(node.left), _constant_text(node.right)
        return None if left is None or right is None else left + right
    return None


def _as_code(text: str) -> ast.Module | None:
    """The parsed module if ``text`` is Python with more than a lone name or literal; else None."""
    if len(text.strip()) < 2:
        return None
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    if not tree.body or all(isinstance(s, ast.Expr) and isinstance(s.value, _TRIVIAL) for s in tree.body):
        return None
    return tree


def _called(node: ast.AST) -> str | None:
    """The plain name a call calls (``exec`` of ``exec(...)``), else None."""
    return node.func.id if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) else None


class _Unwrap(ast.NodeTransformer):
    """Take out every string literal that is code (its module kept in ``found``, the literal left
    empty) and count exec/eval/compile of strings built at run time."""

    def __init__(self):
        self.found: list[ast.Module] = []
        self.runtime = 0

    def visit_Call(self, node: ast.Call) -> ast.AST:
        if _called(node) in RUNTIME_CODE and node.args and _constant_text(node.args[0]) is None \
                and _called(node.args[0]) != "compile":  # exec(compile(...)) is compile's to count
            self.runtime += 1
        return self.generic_visit(node)

    def visit_BinOp(self, node: ast.BinOp) -> ast.AST:
        return self._literal(node) or self.generic_visit(node)

    def visit_Constant(self, node: ast.Constant) -> ast.AST:
        return self._literal(node) or node

    def _literal(self, node: ast.AST) -> ast.AST | None:
        text = _constant_text(node)
        tree = _as_code(text) if text is not None else None
        if tree is None:
            return None
        self.found.append(tree)
        return ast.copy_location(ast.Constant(""), node)


def statements(source: str, budget: Budget, depth: int = 0) -> Statements:
    """The statements of one cell's ``source`` and of the code in its strings, as compared."""
    out = Statements()
    if not budget.pay(source):
        return out
    python = _python(source) if depth == 0 else source
    try:
        tree = ast.parse(python)
    except (SyntaxError, ValueError, RecursionError, MemoryError):  # not Python: compared as text
        out.texts.append(source)
        return out
    unwrap = _Unwrap()
    for node in tree.body:
        try:
            node = unwrap.visit(node) if depth < MAX_DEPTH else node
            out.texts.append(ast.unparse(node))
        except RecursionError:  # nested past what unparse can walk: its raw text
            out.texts.append(ast.get_source_segment(python, node) or "")
    out.runtime += unwrap.runtime
    for inner in unwrap.found:
        try:
            inner_source = ast.unparse(inner)
        except RecursionError:
            continue
        got = statements(inner_source, budget, depth + 1)
        out.texts += got.texts
        out.runtime += got.runtime
    return out
