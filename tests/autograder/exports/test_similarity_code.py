"""A cell's code as the similarity report compares it: statements, the code hidden in strings unwrapped, bounded."""
from __future__ import annotations

import pytest

from autograder.exports.similarity_code import MAX_DEPTH, Budget, statements

CODE = "def glue(a, b):\n    return a + b"


def texts(source: str, chars: int = 100_000) -> list[str]:
    return statements(source, Budget(chars)).texts


@pytest.mark.parametrize("cell", [
    f"exec({CODE!r})",
    f"exec(compile({CODE!r}, '<x>', 'exec'))",
    f"exec({CODE[:9]!r} + {CODE[9:]!r})",
    f"run = exec\nrun({CODE!r})",
    f"source = {CODE!r}\nexec(source)",
    f"import builtins\nbuiltins.exec({CODE!r}.encode())",
    f"%%capture\n{CODE}",
    f"%time exec({CODE!r})",
])
def test_code_in_a_string_is_unwrapped(cell):
    """Is the code of a string run by exec (however reached), or held by a magic, one of the cell's statements?"""
    assert "def glue(a, b):\n    return a + b" in texts(cell)


def test_statements_are_unparsed_without_comments_or_layout():
    """Do a cell's top-level statements come back each on its own, comments gone and layout normalised?"""
    assert texts("x = ( 1 +\n  2 )  # sum\n\n\ny=3") == ["x = 1 + 2", "y = 3"]


def test_plain_strings_and_docstrings_stay_strings():
    """Are a docstring, a word and a file name left as strings, never taken for code?"""
    cell = 'def f():\n    """Return the model."""\n    return open("vanilla.model.params"), "cpu"'
    assert len(texts(cell)) == 1


def test_strings_nested_past_the_depth_stay_strings():
    """Is code nested in exec strings deeper than MAX_DEPTH left in its string, the shallower levels unwrapped?"""
    cell = CODE
    for _ in range(MAX_DEPTH + 2):
        cell = f"exec({cell!r})"
    got = texts(cell)
    assert len(got) == MAX_DEPTH + 1 and not any(t.startswith("def glue") for t in got)


def test_the_budget_bounds_what_is_parsed():
    """Does a student's budget stop the parsing of cells and unwrapped strings once spent, and say so?"""
    budget = Budget(60)
    first = statements(f"exec({CODE!r})", budget)
    assert budget.spent_out and first.texts == ["exec('')"]  # the string's code was past the budget
    assert statements("x = 1", budget).texts == []


@pytest.mark.parametrize("cell", ["def f(:\n    pass", "x = 1\x00", "(" * 300 + ")" * 300, "1" + "+1" * 50_000])
def test_a_cell_that_cannot_be_parsed_or_unparsed_is_compared_as_text(cell):
    """Is a cell that is not Python, holds a NUL, nests past the parser or past unparse's recursion kept as text?"""
    got = texts(cell, 1_000_000)
    assert got and "".join(got).replace(" ", "").startswith(cell.replace(" ", "")[:10])


def test_exec_of_code_built_at_run_time_is_counted():
    """Are exec, eval and compile of strings built at run time counted, and exec of a literal not?"""
    cell = f"exec(bytes.fromhex('78203d2031').decode())\neval(name)\nexec({CODE!r})\nexec(compile(s, 'x', 'exec'))"
    assert statements(cell, Budget(10_000)).runtime == 3
