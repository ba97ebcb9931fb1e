"""Fingerprints of code compared as one document whose statements may stand in any order.

Each statement (``similarity_code``) is fingerprinted on its own with copydetect (tokenised by
pygments, names, strings and comments folded, k-grams hashed); the release's k-grams are taken
out as copydetect's boilerplate is, and a statement the release holds whole is left out. The
statements' fingerprints are laid side by side in one document, a gap of ``k`` between two, so
no k-gram spans two statements and none counts twice across a move: which cell a statement is
in, and in what order, changes nothing. ``similarity_scores`` counts the fingerprints two
documents share; ``marks`` finds where, for the page.

Python's ``hash`` of a k-gram is salted per process: a document's hashes compare only with
hashes made in the same process or in a process forked from the same parent (every unit of a
step is), which ``autograder.exports.similarity`` arranges.
"""
from __future__ import annotations

import io
from dataclasses import dataclass, field

import numpy as np
from copydetect import CodeFingerprint
from copydetect.utils import get_copied_slices


def _print(text: str, k: int) -> CodeFingerprint:
    """copydetect's fingerprint of one statement, every k-gram kept (window 1: salt-independent)."""
    return CodeFingerprint("code.py", k, 1, language="python", fp=io.StringIO(text))


@dataclass(frozen=True)
class Boilerplate:
    """The release's code: its k-grams and its statements, as filtered, never count."""

    hashes: frozenset[int]  # every k-gram hash of the release: taken out of each student's
    statements: frozenset[str]  # each release statement's filtered code: equal ones are dropped


def boilerplate_of(statements: list[str], k: int) -> Boilerplate:
    """The release's statements as boilerplate."""
    prints = [_print(text, k) for text in statements]
    return Boilerplate(frozenset(h for p in prints for h in p.hashes), frozenset(p.filtered_code for p in prints))


@dataclass
class Document:
    """One student's code (a cell, or all cells) as compared: their statements, fingerprinted."""

    text: str = ""  # the statements shown, in the student's order, a blank line between two
    # k-gram hash -> its starts in the laid-out document
    hash_idx: dict[int, np.ndarray] = field(default_factory=dict)
    # each statement's start in the laid-out filtered code
    filtered_at: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    # ... and in ``text``
    text_at: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    # each statement's copydetect offsets (filtered -> raw)
    offsets: list[np.ndarray] = field(default_factory=list)

    @property
    def size(self) -> int:
        """The document's fingerprints (k-gram places)."""
        return sum(len(where) for where in self.hash_idx.values())


def document(statements: list[str], k: int, boilerplate: Boilerplate,
             made: dict[str, CodeFingerprint] | None = None) -> Document:
    """The student's own statements (neither the release's whole nor a repeat), fingerprinted each
    on its own and laid out in one document; ``made`` keeps each statement's fingerprint for the
    student's other documents (a cell's row repeats statements of the whole)."""
    kept, seen = [], set()
    made = {} if made is None else made
    for text in statements:
        # too short for one k-gram (filtering only shortens), or a repeat
        if len(text) < k or text in seen:
            continue
        seen.add(text)
        fp = made[text] if text in made else made.setdefault(text, _print(text, k))
        # copydetect's boilerplate removal, with a set: the release's k-grams never count
        own = {h: where for h, where in fp.hash_idx.items() if h not in boilerplate.hashes}
        if own and fp.filtered_code not in boilerplate.statements:
            kept.append((text, fp, own))
    doc = Document()
    starts: dict[int, list[int]] = {}
    filtered_at, text_at, at, shown = [], [], 0, []
    for text, fp, own in kept:
        for h, where in own.items():
            starts.setdefault(h, []).extend(at + int(i) for i in where)
        filtered_at.append(at)
        text_at.append(sum(len(s) + 2 for s in shown))
        shown.append(text)
        doc.offsets.append(np.asarray(fp.offsets, dtype=np.int64).reshape(-1, 2))
        at += len(fp.filtered_code) + k  # a gap: no run of matches joins two statements
    doc.text = "\n\n".join(shown)
    doc.hash_idx = {h: np.asarray(v, dtype=np.int64) for h, v in starts.items()}
    doc.filtered_at, doc.text_at = np.asarray(filtered_at, dtype=np.int64), np.asarray(text_at, dtype=np.int64)
    return doc


def _matched(a: Document, b: Document, k: int) -> np.ndarray:
    """a's runs of k-grams found in b: a 2 x N array of (starts, ends) in a's laid-out code."""
    common = a.hash_idx.keys() & b.hash_idx.keys()
    if not common:
        return np.zeros((2, 0), dtype=np.int64)
    return np.asarray(get_copied_slices(np.concatenate([a.hash_idx[h] for h in common]), k), dtype=np.int64)


def marks(a: Document, b: Document, k: int) -> tuple[list[int], list[int]]:
    """Where a's text holds code found in b: (starts, ends) in ``a.text``, for the page."""
    runs = _matched(a, b, k)
    starts, ends = [], []
    for start, end in zip(*runs.tolist()):
        i = int(np.searchsorted(a.filtered_at, start, side="right")) - 1  # the run's statement
        base, offsets = int(a.filtered_at[i]), a.offsets[i]
        local = np.array([start - base, end - base])
        if len(offsets):  # copydetect's own mapping of filtered positions to the statement's text
            local = local + offsets[:, 1][np.clip(np.searchsorted(offsets[:, 0], local), 0, len(offsets) - 1)]
        starts.append(int(a.text_at[i] + local[0]))
        ends.append(int(a.text_at[i] + local[1]))
    return starts, ends
