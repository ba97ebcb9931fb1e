"""The class-weighted and raw shares of every pair: code a study group shares says little, code two share says much."""
from __future__ import annotations

import itertools

import numpy as np

from autograder.exports.similarity_prints import Document
from autograder.exports.similarity_scores import class_weights, pair_weight, shares

HONEST, GROUP, PARTS, VARIANTS = 30, 8, 6, 6  # as benchmarks/similarity_class.py's class: 8 of 40 share a snippet


def _doc(hashes: list[int]) -> Document:
    return Document(hash_idx={h: np.array([i]) for i, h in enumerate(hashes)})


def _class() -> dict[str, Document]:
    """30 honest students, each part's answer one of six (each held by five: ``(student + part) % 6``), three of six
    shared scratch cells; the first 8 holding a long snippet; a copy of student 10 that kept half of each answer and
    rewrote the rest (its own fingerprints), with scratch of its own. Fingerprints are ints: 100 per answer."""
    answer = {(p, v): list(range(1000 * (PARTS * p + v), 1000 * (PARTS * p + v) + 100))
              for p in range(PARTS) for v in range(VARIANTS)}
    scratch = [list(range(100_000 + 100 * c, 100_000 + 100 * c + 30)) for c in range(6)]
    snippet = list(range(200_000, 200_800))
    docs = {}
    for i in range(HONEST):
        mine = [h for p in range(PARTS) for h in answer[(p, (i + p) % VARIANTS)]]
        mine += [h for c in range(3) for h in scratch[(i + c) % 6]] + (snippet if i < GROUP else [])
        docs[f"h{i:03d}"] = _doc(mine)
    kept = [h for p in range(PARTS) for h in answer[(p, (10 + p) % VARIANTS)][:50]]
    docs["copy"] = _doc(kept + list(range(300_000, 300_300)) + list(range(400_000, 400_090)))
    return docs


def test_a_study_groups_snippet_no_longer_lifts_its_honest_pairs_above_a_disguised_copy():
    """In a class of 31 where 8 honest students hold one long snippet, does the class-weighted score rank a copy that
    kept half of its source's answers above every honest pair of the group, though the raw score ranks the group's
    pairs above it?"""
    docs = _class()
    found = shares(docs, class_weights(docs.values()))
    at = {s: i for i, s in enumerate(found.students)}

    def score(matrix, a, b):
        return max(matrix[at[a], at[b]], matrix[at[b], at[a]])

    group = [(a, b) for a, b in itertools.combinations([f"h{i:03d}" for i in range(GROUP)], 2)
             if (int(a[1:]) - int(b[1:])) % VARIANTS]  # wrote every part apart
    assert group
    raw_top = max(score(found.raw, a, b) for a, b in group)
    weighted_top = max(score(found.weighted, a, b) for a, b in group)
    assert raw_top > score(found.raw, "copy", "h010")  # the snippet lifts the group without the weights
    assert score(found.weighted, "copy", "h010") > weighted_top


def test_a_fingerprint_counts_one_over_the_pairs_holding_it():
    """Does code one student or a pair holds count 1, and code 8 hold count 1/28 (its 28 pairs)?"""
    assert [pair_weight(d) for d in (1, 2, 3, 8)] == [1.0, 1.0, 1 / 3, 1 / 28]
