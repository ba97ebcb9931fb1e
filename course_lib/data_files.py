"""Readers for the course's data files, with errors that name the file and line.

Formats (SPEC Part 1):
  wiki.txt                one document per line, plain text
  birth_*.tsv             ``Where was NAME born?<TAB>PLACE`` per line
  birth_test_inputs.tsv   ``Where was NAME born?`` per line (no answer)
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

QUESTION_RE = re.compile(r"^Where was (.+) born\?$")


class DataFormatError(ValueError):
    """A data file exists but does not follow the course's format."""


@dataclass(frozen=True)
class BirthExample:
    """One line of a birth-place file."""

    question: str  # "Where was NAME born?"
    place: str | None  # gold place, or None for an inputs-only file

    @property
    def name(self) -> str:
        return QUESTION_RE.match(self.question).group(1)


def read_text(path: str | Path) -> str:
    """Read a UTF-8 text file exactly (its characters are the vocabulary); FileNotFoundError with a hint if absent."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(
            f"data file not found: {path} (make one with `python -m course_lib world --out DIR`"
            " or point --data-dir at a folder holding the course files)"
        )
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError as err:
        raise DataFormatError(f"{path}: not valid UTF-8 ({err})") from err


def read_lines(path: str | Path) -> list[str]:
    """A line-per-record file (the TSVs, predictions) as a reader of the handout's formats reads it:
    a UTF-8 byte-order mark is not text, Windows (CRLF) and old Mac (CR) line ends are line ends,
    and the newline that ends the last line does not start another."""
    text = read_text(path).removeprefix("\ufeff").replace("\r\n", "\n").replace("\r", "\n")
    lines = text.split("\n")
    return lines[:-1] if lines and lines[-1] == "" else lines


def read_birth_places(path: str | Path, require_answers: bool = False) -> list[BirthExample]:
    """Parse a birth-place TSV; answers are optional unless ``require_answers``."""
    examples = []
    for lineno, line in enumerate(read_lines(path), start=1):
        if not line.strip():
            continue  # the trailing newline, or blank lines
        parts = line.split("\t")
        if len(parts) > 2:
            raise DataFormatError(f"{path}:{lineno}: expected at most one TAB, got {len(parts) - 1}: {line!r}")
        question = parts[0].strip()
        if not QUESTION_RE.match(question):
            raise DataFormatError(f"{path}:{lineno}: expected 'Where was NAME born?', got {question!r}")
        place = parts[1].strip() if len(parts) == 2 else None
        if place == "":
            place = None
        if require_answers and place is None:
            raise DataFormatError(f"{path}:{lineno}: missing the place after the TAB: {line!r}")
        examples.append(BirthExample(question, place))
    if not examples:
        raise DataFormatError(f"{path}: no examples found")
    return examples


def read_predictions(path: str | Path) -> list[str]:
    """One predicted place per line (see ``read_lines``)."""
    return read_lines(path)


def read_handed_in_predictions(path: str | Path, questions: int) -> list[str]:
    """A predictions file for ``questions`` questions, as the grader and the notebooks' run cells read it:
    a UTF-8 byte-order mark, CRLF line ends, spaces at a line's ends and blank lines after the last answer
    are not predictions."""
    lines = [line.strip() for line in read_predictions(path)]
    while len(lines) > questions and not lines[-1]:
        lines.pop()
    return lines
