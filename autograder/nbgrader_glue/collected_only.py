"""nbgrader's autograde reads the collect step's copies only, however it is started.

``autograder autograde`` points nbgrader at ``collected/`` (regular files, no links). Plain
``nbgrader autograde`` and formgrader's Autograde button read the course config's ``submitted/``,
where a notebook may be a link to a classmate's: graded as this student's, and shown to the
instructor for manual grading as theirs. This first sanitising step of nbgrader's autograde
refuses any notebook that is not in ``collected/``, with a line that says what to run instead.
"""
from __future__ import annotations

from pathlib import Path

from nbconvert.preprocessors import Preprocessor
from traitlets import Bool

COLLECTED = "collected"  # in the course folder: the collect step's copies, what nbgrader autogrades


class OnlyCollectedCopies(Preprocessor):
    """Stops nbgrader's autograde of a notebook outside ``collected/<student>/<assignment>/``."""

    enabled = Bool(True).tag(config=True)  # nbconvert's preprocessors are off unless enabled

    def preprocess(self, nb, resources):
        """Refuse a notebook outside ``collected/`` (or in a linked folder); pass others through."""
        folder = Path(resources.get("metadata", {}).get("path") or ".")
        if folder.parent.parent.name != COLLECTED or folder.is_symlink():
            raise ValueError(f"not autograding {folder.parent.name}: nbgrader reads {folder.parent.parent.name}/, "
                             "not the collect step's copies; run `python -m autograder autograde` instead")
        return nb, resources
