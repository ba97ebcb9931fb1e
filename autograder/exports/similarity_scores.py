"""Every pair of students' code scored at once: the raw and the class-weighted share of fingerprints they share.

A document's fingerprints are the k-grams of its statements (``similarity_prints``), each place one
fingerprint. How much of a's code is in b's is the share of a's fingerprints whose hash b's code
holds too, as MOSS counts matched fingerprints:
  - **raw**: every fingerprint counts 1;
  - **class-weighted**: a fingerprint whose hash ``d`` of the class's students hold counts
    ``1 / (d (d - 1) / 2)``, one over the pairs of students holding it (1 for ``d`` of 1 or 2).
    Code passed once from one student to another is held by that pair alone and counts 1; code
    ``d`` students hold tells of at most one copy among its ``d (d - 1) / 2`` pairs, so each pair
    gets that share of it, as MOSS weighs down passages many submissions hold (its ``-m``), but
    graded, with no cut-off: a study group's snippet held by 8 counts 1/28, the handout's
    dictated calls nearly nothing. A score is a ratio of weights, so a weight counts only against
    the student's other code: a copy and its source, whose code the same few classmates hold,
    keep the share they have raw. The class is every compared student's all-code document.
Both are computed for every pair at once, as products of (students x fingerprints) count matrices
over the fingerprints two or more students hold, a block of fingerprints at a time, so the
driver's memory stays (students x students) and its time grows with what students share.
"""
from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from autograder.exports.similarity_prints import Document

BLOCK = 4096  # fingerprint hashes a block of the products: scratch memory is students x BLOCK floats


@dataclass(frozen=True, slots=True)
class PairScore:
    """How much of two students' code (all of it, or one graded cell's) is the same."""

    cell: str  # grade_id, or similarity.OVERALL
    a: str  # one student (a < b)
    b: str  # the other
    a_in_b: float  # class-weighted share of a's fingerprints also in b's
    b_in_a: float  # class-weighted share of b's fingerprints also in a's
    raw_a_in_b: float  # share of a's fingerprints also in b's, each counting 1
    raw_b_in_a: float  # share of b's fingerprints also in a's, each counting 1
    matched: int  # fingerprints of a and of b found in the other's code, the larger count

    @property
    def similarity(self) -> float:
        """The larger class-weighted share: one student's code found whole in the other's is what matters."""
        return max(self.a_in_b, self.b_in_a)

    @property
    def raw(self) -> float:
        """The larger raw share."""
        return max(self.raw_a_in_b, self.raw_b_in_a)


def pair_weight(holders: int) -> float:
    """A fingerprint's weight when ``holders`` of the class's students hold it: one over the pairs holding it."""
    return 1.0 if holders <= 2 else 2.0 / (holders * (holders - 1))


def class_weights(documents: Iterable[Document]) -> dict[int, float]:
    """Fingerprint hash -> its weight (``pair_weight`` of how many of the class's documents hold it)."""
    held = Counter(h for doc in documents for h in doc.hash_idx)
    return {h: pair_weight(n) for h, n in held.items()}


@dataclass(frozen=True)
class Shares:
    """Every ordered pair's shares of one row kind, students in name order."""

    students: list[str]  # the rows' and columns' students
    raw: np.ndarray  # (N, N): share of row's fingerprints found in column's code
    weighted: np.ndarray  # (N, N): the same, class-weighted
    matched: np.ndarray  # (N, N): row's fingerprints found in column's code


def shares(docs: dict[str, Document], weight: dict[int, float]) -> Shares:
    """Every pair of ``docs``' shares, raw and weighted by ``weight`` (a hash missing from it weighs 1)."""
    students = sorted(docs)
    n = len(students)
    held = Counter(h for s in students for h in docs[s].hash_idx)
    column = {h: j for j, h in enumerate(sorted(h for h, count in held.items() if count > 1))}
    weights = np.array([weight.get(h, 1.0) for h in column], dtype=np.float64)
    totals, weighted_totals = np.zeros(n), np.zeros(n)
    rows, cols, counts = [], [], []
    for i, s in enumerate(students):
        found = docs[s].hash_idx
        many = np.array([len(where) for where in found.values()], dtype=np.float64)
        totals[i] = many.sum()
        weighted_totals[i] = many @ np.array([weight.get(h, 1.0) for h in found], dtype=np.float64)
        mine = [(column[h], len(where)) for h, where in found.items() if h in column]
        rows += [i] * len(mine)
        cols += [j for j, _ in mine]
        counts += [c for _, c in mine]
    order = np.argsort(np.asarray(cols, dtype=np.int64), kind="stable")
    rows_, cols_, counts_ = (np.asarray(x)[order] for x in (rows, cols, counts))
    matched, weighted = np.zeros((n, n)), np.zeros((n, n))
    for start in range(0, len(column), BLOCK):
        lo, hi = np.searchsorted(cols_, [start, start + BLOCK])
        block = np.zeros((n, min(BLOCK, len(column) - start)), dtype=np.float32)  # (N, B): each one's counts
        block[rows_[lo:hi], cols_[lo:hi] - start] = counts_[lo:hi]
        present = (block > 0).astype(np.float32)  # (N, B)
        matched += block @ present.T
        weighted += (block * weights[start:start + block.shape[1]]) @ present.T
    np.fill_diagonal(matched, 0)
    np.fill_diagonal(weighted, 0)
    with np.errstate(divide="ignore", invalid="ignore"):
        raw = np.nan_to_num(matched / totals[:, None])
        weighted = np.nan_to_num(weighted / weighted_totals[:, None])
    return Shares(students, raw, weighted, np.rint(matched).astype(np.int64))


def ranked(cell: str, found: Shares, limit: int) -> tuple[list[PairScore], int]:
    """The ``limit`` best pairs sharing any fingerprint (class-weighted similarity, then matched fingerprints, then
    names), and how many pairs share any."""
    i, j = np.triu_indices(len(found.students), 1)
    both = np.maximum(found.matched[i, j], found.matched[j, i])
    keep = both > 0
    i, j, both = i[keep], j[keep], both[keep]
    similarity = np.maximum(found.weighted[i, j], found.weighted[j, i])
    order = np.lexsort((j, i, -both, -similarity))[:limit]
    names = found.students
    return [PairScore(cell, names[a], names[b], float(found.weighted[a, b]), float(found.weighted[b, a]),
                      float(found.raw[a, b]), float(found.raw[b, a]), int(m))
            for a, b, m in zip(i[order], j[order], both[order])], int(keep.sum())
