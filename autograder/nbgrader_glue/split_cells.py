"""nbgrader's DeduplicateIds, made to survive JupyterLab's Split Cell without failing a student.

Split Cell gives each part of a cell the whole cell's metadata, so several cells hold one
grade_id. nbgrader's own step keeps the last and sets the others' nbgrader metadata to ``{}``,
which its ``CheckCellMetadata`` then refuses ("Outdated schema version"): the notebook fails,
and with it the student's whole autograde (``autograded/`` is left empty: no manual grading, no
feedback). This step, in DeduplicateIds' place among the sanitising steps, keeps its rule (the
last cell of a grade_id keeps it) and repairs the rest:
  - the other cells become plain cells (their nbgrader metadata removed, which nbgrader's checks
    accept). A split answer's code still runs part after part, each its own cell, as Run All
    runs it and as the score of record runs it;
  - the parts of a split text cell (adjacent markdown or raw cells with one nbgrader metadata:
    a written answer, graded by hand) are first merged back into one, as JupyterLab's Merge
    Cells does, so the graded cell holds the whole answer.
Each repair is a warning in nbgrader's log for the instructor.
"""
from __future__ import annotations

from nbgrader.preprocessors import DeduplicateIds

from course_lib.loader.grade_ids import grade_id, split_parts

JOIN = "\n\n"  # what JupyterLab's Merge Cells puts between the merged cells' sources


class SplitCellIds(DeduplicateIds):
    """DeduplicateIds whose repeats stay valid cells; a split text cell's parts merged back."""

    def preprocess(self, nb, resources):
        """Merge split text cells back, then deduplicate the grade_ids cell by cell."""
        for parts in reversed(split_parts(nb.cells)):  # from the end, so earlier indices stay put
            first = nb.cells[parts[0]]
            if first.cell_type == "code":
                continue
            self.log.warning("cells %s hold grade_id '%s' (a text cell split in JupyterLab): merged back into one",
                             ", ".join(map(str, parts)), grade_id(first))
            first.source = JOIN.join(nb.cells[i].source for i in parts)
            attachments = {k: v for i in parts for k, v in (nb.cells[i].get("attachments") or {}).items()}
            if attachments:
                first.attachments = attachments
            del nb.cells[parts[0] + 1:parts[-1] + 1]
        self._cells, self._kept = len(nb.cells), {}
        return super().preprocess(nb, resources)

    def preprocess_cell(self, cell, resources, cell_index):
        """A repeat of a grade_id kept later in the notebook becomes a plain cell."""
        held, index = grade_id(cell), self._cells - 1 - cell_index  # cells are visited last first
        if held is not None and held in self._kept:
            self.log.warning("cell %d holds grade_id '%s', as cell %d after it does (Split Cell or a copy): cell %d "
                             "runs as a plain cell", index, held, self._kept[held], index)
            del cell.metadata["nbgrader"]
            return cell, resources
        if held is not None:
            self._kept[held] = index
        return super().preprocess_cell(cell, resources, cell_index)
