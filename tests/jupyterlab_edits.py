"""What JupyterLab's own editing commands leave in a notebook, for tests of honest submissions."""
from __future__ import annotations

import copy

import nbformat


def split_cell(nb, grade_id: str, at: str) -> tuple[str, str]:
    """Split the cell of ``grade_id`` as JupyterLab's Split Cell does with the cursor before ``at``: each part a new
    cell with the whole cell's metadata (nbgrader's too), newlines at the ends of each part trimmed, the outputs kept
    by the last. Returns the two parts' sources."""
    cell = next(c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") == grade_id)
    offset = cell.source.index(at)
    first, second = cell.source[:offset].strip("\n"), cell.source[offset:].strip("\n")
    new = nbformat.v4.new_code_cell if cell.cell_type == "code" else nbformat.v4.new_markdown_cell
    parts = [new(first, metadata=copy.deepcopy(cell.metadata)), new(second, metadata=copy.deepcopy(cell.metadata))]
    if cell.cell_type == "code":
        parts[1].outputs = cell.outputs
    index = nb.cells.index(cell)
    nb.cells[index:index + 1] = parts
    return first, second
