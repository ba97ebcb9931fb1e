"""grade_ids that a notebook holds more than once, as JupyterLab leaves them.

JupyterLab's Split Cell gives each part of a cell the whole cell's metadata, nbgrader's
included (and Copy/Paste does the same), so several cells then carry one grade_id. nbgrader's
own ``DeduplicateIds`` keeps the last and empties the others' metadata, which its
``CheckCellMetadata`` then refuses: the whole student fails. Both graders read the repeats
here instead, with nbgrader's rule that the last cell of a grade_id keeps it: nbgrader's
autograde runs the others as plain cells and merges a split text cell back into one
(``autograder.nbgrader_glue.split_cells``); the score of record runs every part in order, as
Run All does, and checks at the last test cell of a grade_id.
"""
from __future__ import annotations


def grade_id(cell) -> str | None:
    """The grade_id nbgrader keys a cell by (a graded, solution or locked cell's), else None."""
    meta = cell.get("metadata", {}).get("nbgrader") or {}
    if not (meta.get("grade") or meta.get("solution") or meta.get("locked")):
        return None
    value = meta.get("grade_id")
    return value if isinstance(value, str) and value else None


def repeated_ids(cells) -> dict[str, list[int]]:
    """grade_id -> the indices of the cells holding it, for every grade_id more than one cell holds."""
    held: dict[str, list[int]] = {}
    for index, cell in enumerate(cells):
        found = grade_id(cell)
        if found is not None:
            held.setdefault(found, []).append(index)
    return {g: indices for g, indices in held.items() if len(indices) > 1}


def _same_cell(a, b) -> bool:
    """Two parts of one split cell: one cell type and one nbgrader metadata (JupyterLab copies it to every part)."""
    return a.cell_type == b.cell_type and a.metadata.get("nbgrader") == b.metadata.get("nbgrader")


def split_parts(cells) -> list[list[int]]:
    """Runs of two or more adjacent cells that are the parts of one split cell, in notebook order."""
    runs = []
    for indices in repeated_ids(cells).values():
        run = [indices[0]]
        for index in indices[1:]:
            if index == run[-1] + 1 and _same_cell(cells[run[-1]], cells[index]):
                run.append(index)
                continue
            if len(run) > 1:
                runs.append(run)
            run = [index]
        if len(run) > 1:
            runs.append(run)
    return sorted(runs)
