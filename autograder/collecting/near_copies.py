"""Runs two students share though not byte for byte: every pair's collect-unit prints compared.

Each student trains from a seed of their own (``course_lib.seeds``), so two honest students' weights
are unrelated and their wrong answers differ. A run copied from a classmate and changed a little (a
value nudged, noise added, a line of predictions edited, the params saved another way, its units and
heads reordered, several classmates' params averaged) keeps some of both.
For each run part and each pair of students:
  - **weights**: the median, over the weight matrices both params files hold, of the absolute cosine
    of their sketches (``run_prints``): a copy keeps it near 1 (a function-preserving sign flip of
    some matrices too), two own seeds leave it near 0;
  - **circuits**: the same median over each block's circuits (``run_prints``: products of its
    matrices, read through the token embedding, that reordering the MLP's units, the heads, each
    head's dimensions and the residual stream's axes leaves as they are), so a copy reordered to
    compute the same function with other matrices is still near 1;
  - **answers**: on each split, the questions either of the two answers wrongly, and on those how
    often they give the same answer, beyond what chance explains: Cohen's kappa against the
    agreement their own answer frequencies give by chance (two models that answer every question
    alike, "" or the commonest place, carry no evidence). Questions both answer right are left out:
    agreeing there is what accuracy explains.
A pair is a near-copy when any measure passes its bound. And for each student, a **mean** of
classmates: an average of k classmates' params is 1/sqrt(k) alike to each (0.45 for five, under the
weights' bound), but a sketch is linear in its tensors, so the average's sketches are the sources'
sketches averaged. The classmates whose weights are at least ``Bounds.mean_candidate`` alike are
fitted to the student's sketches (least squares, weights not negative; a classmate and the near-copies
of its run are one source); when two or more together explain ``Bounds.mean_fit`` of them, and
``Bounds.mean_gain`` more than the most alike one alone, the run is flagged against each of them.
The bounds are measured on honest students and perturbed copies (``benchmarks/run_similarity.py``,
"Near-copies of runs" in benchmarks/FINDINGS.md). The driver compares only the prints (a few
kilobytes a student), in blocks of students, so the cost stays small for 500 students.
"""
from __future__ import annotations

import warnings
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from autograder.checks.run_chains import CHAINS
from autograder.checks.run_files import RUN_PARTS
from autograder.collecting.prints import Prints
from autograder.collecting.run_prints import LINE_HASH, SKETCH_WIDTH, hash_answers, trimmed
from course_lib import layout
from course_lib.data_files import read_birth_places

BLOCK = 64  # students compared against everyone at once (bounds the driver's scratch memory)
MAX_COLUMNS = 64  # classmates fitted to one run's sketches (its sources and their near-copies), most alike first


@dataclass(frozen=True)
class Bounds:
    """When two students' runs count as one run, or one run as the mean of others (see the module docstring)."""

    weights: float = 0.5  # median |cosine| of weight sketches at which two params count as one run
    min_matrices: int = 3  # weight matrices both params files must hold before their median counts
    circuits: float = 0.5  # median |cosine| of circuit sketches at which two params count as one run
    min_circuits: int = 3  # circuits both params files must hold before their median counts
    answers: float = 0.9  # kappa of the answers either gets wrong at which two runs count as one
    informative: float = 20.0  # kappa needs this many questions either gets wrong, x (1 - chance)
    mean_candidate: float = 0.2  # weights' median |cosine| from which a classmate may be one of a mean's sources
    mean_fit: float = 0.8  # share of a run's sketches its sources explain together, to flag it
    mean_gain: float = 0.1  # ... beyond what the most alike one explains alone (a copy and its source are one run)
    max_sources: int = 16  # the most alike classmates fitted


@dataclass(frozen=True)
class NearCopy:
    """Two students' runs of one run part that look like one run, and why."""

    file: str  # the run part's params file
    student: str  # one student of the pair (of a mean: the student whose run it is)
    other: str  # the other, after ``student`` in name order (of a mean: one of its sources)
    why: str  # the evidence, in the instructor's words


def gold_hashes(gold: dict) -> dict[str, bytes]:
    """split -> the hashes of its right answers (``gold`` as ``load_gold`` reads it)."""
    return {split: hash_answers([e.place for e in examples]) for split, examples in gold.items()}


def dev_gold(data_dir: Path) -> dict[str, bytes] | None:
    """The dev split's right answers' hashes from the course's data folder (the test answers are
    grader-only: a step without them compares the dev answers and the weights); None when the folder
    has no dev answers."""
    try:
        return gold_hashes({"dev": read_birth_places(data_dir / layout.DEV, require_answers=True)})
    except (OSError, ValueError):
        return None


@dataclass(frozen=True)
class Weights:
    """Every pair's comparison of one params file's sketches."""

    place: dict[str, int]  # student -> their row (students with a sketch of the file)
    median: np.ndarray  # (N, N): median |cosine| over the matrices both hold
    count: np.ndarray  # (N, N): how many matrices both hold

    def of(self, a: str, b: str) -> tuple[float, int] | None:
        """(median |cosine|, matrices) of a pair, or None when either lacks a sketch."""
        if a not in self.place or b not in self.place:
            return None
        i, j = self.place[a], self.place[b]
        return float(self.median[i, j]), int(self.count[i, j])


def _weights(students: list[tuple[str, Prints]], file: str, circuits: bool = False) -> Weights:
    """Every pair of ``file``'s weight (or circuit) sketches compared, one block of students at a time."""
    sketches = [(s, dict(p.params).get(file)) for s, p in students]
    sketches = [(s, sketch.matrix(circuits)) for s, sketch in sketches if sketch is not None]
    keys = sorted({k for _, m in sketches for k in m})
    # (N, K, W): unit sketches, 0 where a file lacks one
    vectors = np.zeros((len(sketches), len(keys), SKETCH_WIDTH))
    present = np.zeros((len(sketches), len(keys)), dtype=bool)  # (N, K)
    for i, (_, matrices) in enumerate(sketches):
        for k, key in enumerate(keys):
            if key in matrices:
                vectors[i, k], present[i, k] = matrices[key], True
    median = np.zeros((len(sketches), len(sketches)))
    count = np.zeros((len(sketches), len(sketches)), dtype=int)
    for start in range(0, len(sketches), BLOCK):
        block = slice(start, start + BLOCK)
        # numpy's own loops, not BLAS: OpenBLAS's spinning threads crawl on a busy grading machine
        cosines = np.abs(np.einsum("ikw,jkw->kij", vectors[block], vectors))  # (K, b, N)
        both = present.T[:, block, None] & present.T[:, None, :]  # (K, b, N)
        count[block] = both.sum(0)
        if both.all():  # every file holds every matrix (the usual case): a plain median
            median[block] = np.median(cosines, axis=0)
        else:
            with np.errstate(all="ignore"), warnings.catch_warnings():
                # a pair sharing no matrix has a NaN median, made 0
                warnings.simplefilter("ignore", RuntimeWarning)
                median[block] = np.nan_to_num(np.nanmedian(np.where(both, cosines, np.nan), axis=0))
    return Weights({s: i for i, (s, _) in enumerate(sketches)}, median, count)


def _alike_weights(weights: Weights, bound: float, least: int) -> list[tuple[str, str]]:
    """The pairs (in name order) whose median passes ``bound`` over at least ``least`` sketches."""
    names = sorted(weights.place, key=weights.place.get)
    passing = (weights.median >= bound) & (weights.count >= least)
    return [tuple(sorted((names[i], names[j]))) for i, j in zip(*np.nonzero(np.triu(passing, 1)))]


def _fit(gram: np.ndarray, target: np.ndarray) -> np.ndarray:
    """Coefficients, none negative, of the sum of columns nearest a vector, from the columns' Gram matrix and their
    dot products with the vector (least squares; a column with a negative coefficient is dropped, the rest refitted)."""
    kept = np.arange(len(target))
    while True:
        beta = np.zeros(len(target))
        beta[kept] = np.linalg.lstsq(gram[np.ix_(kept, kept)], target[kept], rcond=None)[0]
        if kept.size == 0 or beta[kept].min() >= 0:
            return beta
        kept = kept[kept != kept[np.argmin(beta[kept])]]


def _sources(i: int, weights: Weights, bounds: Bounds) -> list[list[int]]:
    """The classmates alike enough to be among student ``i``'s sources, most alike first, in groups of one run each
    (classmates whose weights are near-copies of each other: a source and its copies), at most ``max_sources``."""
    groups: list[list[int]] = []
    for j in np.argsort(-weights.median[i], kind="stable"):
        if j == i or weights.count[i, j] < bounds.min_matrices:
            continue
        if weights.median[i, j] < bounds.mean_candidate:
            break
        same = next((g for g in groups if weights.median[g[0], j] >= bounds.weights
                     and weights.count[g[0], j] >= bounds.min_matrices), None)
        if same is not None:
            same.append(int(j))
        elif len(groups) < bounds.max_sources:
            groups.append([int(j)])
    return groups


def _means(students: list[tuple[str, Prints]], file: str, weights: Weights, bounds: Bounds
           ) -> list[tuple[str, list[str], str]]:
    """(student, sources, why) for each run that the sum of several classmates' runs explains and none alone (a
    source's near-copies named with it)."""
    sketches = {s: sketch.raw() for s, p in students if (sketch := dict(p.params).get(file)) is not None}
    names = sorted(weights.place, key=weights.place.get)
    found = []
    for i, student in enumerate(names):
        groups, mine = _sources(i, weights, bounds), sketches[student]
        if len(groups) < 2 or not mine:
            continue
        scale = {k: np.linalg.norm(v) for k, v in mine.items()}  # every matrix counts alike
        y = np.concatenate([mine[k] / scale[k] for k in mine])
        columns = [(c, j) for c, g in enumerate(groups) for j in g][:MAX_COLUMNS]  # (group, classmate)
        x = np.stack([np.concatenate([sketches[names[j]].get(k, np.zeros(SKETCH_WIDTH)) / scale[k] for k in mine])
                      for _, j in columns], axis=1)  # (K * W, columns)
        # numpy's own loops, not BLAS (see _weights): (columns, columns) and (columns,)
        gram, target, total = np.einsum("kc,kd->cd", x, x), np.einsum("kc,k->c", x, y), y @ y
        alone = float(np.max(target ** 2 / np.maximum(np.diag(gram) * total, 1e-300)))
        if alone > 1 - bounds.mean_gain:  # one classmate's run explains it (a copy, or the source of copies)
            continue
        beta = _fit(gram, target)
        explained = 1 - (total - 2 * beta @ target + beta @ gram @ beta) / total
        share = np.bincount([c for c, _ in columns], beta * np.sqrt(np.diag(gram)), len(groups))  # each group's
        used = [sorted(names[j] for j in g) for c, g in enumerate(groups) if share[c] >= 0.05 * share.sum()]
        if explained >= bounds.mean_fit and explained - alone >= bounds.mean_gain and len(used) >= 2:
            shown = "; ".join(" or ".join(g[:3]) + (f" or {len(g) - 3} near-copies of them" if len(g) > 3 else "")
                              for g in sorted(used))
            found.append((student, sorted(n for g in used for n in g),
                          f"close to the mean of {len(used)} classmates' runs ({shown}): together they explain "
                          f"{100 * explained:.0f}% of its weight sketches over {len(mine)} matrices, one alone at most "
                          f"{100 * alone:.0f}%"))
    return found


@dataclass(frozen=True)
class Agreement:
    """Two students' answers to one split, where either is wrong."""

    alike: int  # questions either answers wrongly that both answer the same
    either_wrong: int  # questions either answers wrongly
    chance: float  # share of those alike by chance, from each one's answer frequencies

    @property
    def kappa(self) -> float:
        observed = self.alike / self.either_wrong if self.either_wrong else 0.0
        return (observed - self.chance) / (1 - self.chance) if self.chance < 1 else 0.0

    @property
    def informative(self) -> float:
        return self.either_wrong * (1 - self.chance)

    def passes(self, bounds: Bounds) -> bool:
        return self.kappa >= bounds.answers and self.informative >= bounds.informative


def _agreement(mine: np.ndarray, theirs: np.ndarray, gold: np.ndarray) -> Agreement:
    wrong = (mine != gold) | (theirs != gold)
    a, b = mine[wrong], theirs[wrong]
    n = int(wrong.sum())
    if n == 0:
        return Agreement(0, 0, 1.0)
    ca, cb = Counter(a.tolist()), Counter(b.tolist())
    chance = sum(count * cb.get(answer, 0) for answer, count in ca.items()) / (n * n)
    return Agreement(int((a == b).sum()), n, chance)


def _answers(students: list[tuple[str, Prints]], file: str, gold: bytes,
             bounds: Bounds) -> tuple[dict[tuple[str, str], Agreement], dict[str, np.ndarray]]:
    """(student, other) -> their Agreement on ``file``, for the pairs that pass (and each student's
    answers, for the evidence of pairs the weights flag)."""
    questions = len(gold) // LINE_HASH
    rows = {}
    for student, p in students:
        lines = dict(p.answers).get(file)
        if lines is not None and len(lines := trimmed(lines, questions)) == len(gold):
            rows[student] = np.frombuffer(lines, dtype="<u8")
    names = sorted(rows)
    if len(names) < 2:
        return {}, rows
    answers = np.stack([rows[n] for n in names])  # (N, Q)
    right = np.frombuffer(gold, dtype="<u8")  # (Q,)
    correct = (answers == right).astype(np.float32)  # (N, Q)
    # each question's answers as small codes, question by question in contiguous rows: (Q, N)
    codes = np.stack([np.unique(column, return_inverse=True)[1] for column in answers.T]).astype(np.int32)
    same = np.zeros((len(names), len(names)), dtype=np.int32)  # (N, N): questions answered alike
    for column in codes:  # one (N, N) comparison per question: memory stays N squared
        np.add(same, column[:, None] == column[None, :], out=same, casting="unsafe")
    both_right = np.rint(correct @ correct.T).astype(np.int32)  # (N, N): alike as both are right
    alike, either = same - both_right, questions - both_right  # over questions either gets wrong
    out = {}
    # one Agreement per pair of answer rows: students who answer alike (all "", say) share it
    counted: dict[tuple[bytes, bytes], Agreement] = {}
    # kappa never exceeds the share answered alike: only pairs past the bound there are counted
    for a, b in zip(*np.nonzero(np.triu(alike >= bounds.answers * np.maximum(either, 1), 1))):
        key = (rows[names[a]].tobytes(), rows[names[b]].tobytes())
        found = counted.get(key) or counted.setdefault(key, _agreement(answers[a], answers[b], right))
        if found.passes(bounds):
            out[(names[a], names[b])] = found
    return out, rows


def _said(agreement: Agreement, split: str) -> str:
    return (f"{split} answers: {agreement.alike} of the {agreement.either_wrong} questions either got wrong answered "
            f"alike (chance {100 * agreement.chance:.0f}%)")


def near_copies(students: list[tuple[str, Prints]], gold: dict[str, bytes] | None,
                bounds: Bounds = Bounds()) -> list[NearCopy]:
    """Every pair of ``(student, prints)`` whose runs of one run part look like one run; ``gold``
    (split -> hashed right answers) enables the answers' measure (else the weights' alone)."""
    students = sorted(students)
    prints = dict(students)
    found = []
    for part in RUN_PARTS:
        weights = _weights(students, part.params)
        circuits = _weights(students, part.params, circuits=True)
        evidence: dict[tuple[str, str], list[str]] = {
            pair: [] for pair in (*_alike_weights(weights, bounds.weights, bounds.min_matrices),
                                  *_alike_weights(circuits, bounds.circuits, bounds.min_circuits))}
        rows = {}
        splits = [(split, name) for split, name in (("dev", part.dev), ("test", part.test)) if gold and split in gold]
        for split, name in splits:
            passing, rows[split] = _answers(students, name, gold[split], bounds)
            for pair, agreement in passing.items():
                evidence.setdefault(pair, []).append(_said(agreement, split))
        for (a, b), reasons in sorted(evidence.items()):
            for what, compared in (("circuits", circuits.of(a, b)), ("weights", weights.of(a, b))):
                if compared is not None:
                    reasons.insert(0, f"{what}: median cosine {compared[0]:.3f} over {compared[1]} "
                                      f"{'circuits' if what == 'circuits' else 'matrices'}")
            for split, _ in splits:
                if not any(r.startswith(split) for r in reasons) and a in rows[split] and b in rows[split]:
                    reasons.append(_said(_agreement(rows[split][a], rows[split][b],
                                                    np.frombuffer(gold[split], dtype="<u8")), split))
            found.append(NearCopy(part.params, a, b, "near-copies of one run: " + "; ".join(
                reasons + _same_seeds(prints[a], prints[b], part.name))))
        found += [NearCopy(part.params, student, source, why)
                  for student, sources, why in _means(students, part.params, weights, bounds) for source in sources]
    return found


def _same_seeds(mine: Prints, theirs: Prints, part: str) -> list[str]:
    """The seeds both students' logs of the part's training runs record alike (an explicit
    COURSE_SEED two honest students share makes their runs alike too: the instructor must know)."""
    logs = {f"{run}.json" for run in CHAINS[part]}
    a, b = dict(mine.seeds), dict(theirs.seeds)
    same = sorted({a[log] for log in logs if log in a and a[log] == b.get(log)})
    return [f"both logs record seed {', '.join(map(str, same))}"] if same else []
