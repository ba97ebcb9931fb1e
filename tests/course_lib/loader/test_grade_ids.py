import copy

from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

from course_lib.loader.grade_ids import grade_id, repeated_ids, split_parts


def _graded(cell, gid, **flags):
    cell.metadata["nbgrader"] = {"grade": False, "solution": False, "locked": False, "grade_id": gid,
                                 "schema_version": 3, "task": False, **flags}
    return cell


def _split(cell):
    """The two parts JupyterLab's Split Cell makes of ``cell``: each with the whole cell's metadata."""
    first, second = cell.source.split("\n", 1)
    return [new_code_cell(first, metadata=copy.deepcopy(cell.metadata)),
            new_code_cell(second, metadata=copy.deepcopy(cell.metadata))]


def test_a_split_cell_and_a_copy_are_told_apart():
    """Are the adjacent parts of a split cell one run of split parts, while a copy pasted further down is only a
    repeat of its grade_id?"""
    answer = _graded(new_code_cell("x = 1\ny = 2"), "02-glue", solution=True)
    test = _graded(new_code_cell("assert x"), "02-test", grade=True, locked=True, points=1)
    pasted = new_code_cell(test.source, metadata=copy.deepcopy(test.metadata))  # Copy/Paste: a new cell id
    nb = new_notebook(cells=[*_split(answer), test, new_markdown_cell("notes"), pasted])
    assert repeated_ids(nb.cells) == {"02-glue": [0, 1], "02-test": [2, 4]}
    assert split_parts(nb.cells) == [[0, 1]]


def test_only_cells_nbgrader_keys_hold_a_grade_id():
    """Is a cell with no nbgrader role (not graded, solution or locked) or no grade_id holding none?"""
    assert grade_id(_graded(new_code_cell(""), "free")) is None
    assert grade_id(new_code_cell("")) is None
    assert grade_id(_graded(new_markdown_cell(""), "07-a-i", grade=True, solution=True, points=1)) == "07-a-i"
