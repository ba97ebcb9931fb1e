"""nbgrader's OverwriteCells without its false alarm on every honest submission's hidden tests.

nbgrader's generate_assignment saves each locked cell's source and checksum in the gradebook
*before* it clears the hidden tests (SaveCells runs before ClearHiddenTests, by design: autograde
restores the hidden tests from that copy), so a released test cell with hidden tests never has
the checksum the gradebook holds. Autograde's OverwriteCells then warns "Attribute 'checksum' for
cell ... has changed!" for that cell in every submission, unchanged ones included (nbgrader issue
#1961), burying the one warning that means something: a locked cell a student really edited.

This step quietly restores a locked cell whose source is exactly what the release held (the
gradebook's source with the hidden tests cleared by nbgrader's ClearHiddenTests); everything else
goes through nbgrader's OverwriteCells, warning included.
"""
from __future__ import annotations

import copy

from nbgrader.api import MissingEntry
from nbgrader.preprocessors import ClearHiddenTests, OverwriteCells


class RestoreLockedCells(OverwriteCells):
    """OverwriteCells knowing what nbgrader released for a locked cell with hidden tests."""

    def _as_released(self, cell, source: str) -> str:
        """The source nbgrader's release gave ``cell``, given the gradebook's ``source``."""
        released = copy.deepcopy(cell)
        released.source = source
        # the course's delimiters, if configured
        ClearHiddenTests(parent=self)._remove_hidden_test_region(released)
        return released.source

    def preprocess_cell(self, cell, resources, cell_index):
        """A locked cell exactly as released is restored quietly; else nbgrader's OverwriteCells."""
        grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
        if grade_id is None:
            return super().preprocess_cell(cell, resources, cell_index)
        try:
            source_cell = self.gradebook.find_source_cell(grade_id, self.notebook_id, self.assignment_id)
        except MissingEntry:  # nbgrader's own step says so
            return super().preprocess_cell(cell, resources, cell_index)
        if source_cell.locked and cell.source != source_cell.source and \
                cell.source == self._as_released(cell, source_cell.source):
            cell.source = source_cell.source  # hidden tests back, as nbgrader would, no false alarm
        return super().preprocess_cell(cell, resources, cell_index)
