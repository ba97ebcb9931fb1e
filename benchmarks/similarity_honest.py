"""False positives of the similarity report on an honest cohort, and where hidden copies rank.

    .venv/bin/python benchmarks/similarity_honest.py [--students 40] [--seed 0]

Each honest student is a choice of one honest answer per part (``tests/similarity_cohorts.py``: the
glue of 02 and 04 with 07's last answer, span corruption, the synthesizer, 08's answers; three or
four answers each, written apart), 07's one-line answers in the reference's form or another, and
three of the kind of scratch cells students add. Two students who chose different answers for
every part wrote all their code apart: an honest pair. Pairs sharing k parts' answers copied k
parts. Three copies of sampled students are added: moved out of the graded cells (last first),
run from strings (exec, compile, %%capture), and both. It prints, for each kind of pair, how many
there are and their overall similarity (median, 95th percentile, max), and the time the report
took. Figures go to benchmarks/FINDINGS.md ("Similarity report").
"""
from __future__ import annotations

import argparse
import itertools
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO), str(REPO / "tests")]


def _cohort(submitted: Path, count: int, seed: int) -> dict[str, dict[str, int]]:
    """Write ``count`` honest students and three hidden copies; student -> its choice per part (copies: their
    original's)."""
    from honest_code import SCRATCH
    from similarity_cohorts import PARTS, files, honest, moved, submit, wrapped

    rng = random.Random(seed)
    everyone = list(itertools.product(*(range(len(v)) for v in PARTS.values()), (0, 1)))
    chosen: dict[str, dict[str, int]] = {}
    given: dict[str, dict[str, str]] = {}
    for i, combo in enumerate(rng.sample(everyone, count)):
        student = f"h{i:03d}"
        chosen[student] = dict(zip([*PARTS, "short"], combo))
        given[student] = honest(dict(zip(PARTS, combo[:-1])), short=combo[-1])
        submit(submitted, student, files(given[student], tuple(rng.sample(SCRATCH, 3))))
    originals = rng.sample(sorted(given), 3)
    hidden = {"copy_moved": {n: moved(n, given[originals[0]]) for n in files({})},
              "copy_strings": files({g: wrapped(c, i) for i, (g, c) in enumerate(given[originals[1]].items())}),
              "copy_both": {n: moved(n, {g: wrapped(c, i) for i, (g, c) in enumerate(given[originals[2]].items())})
                            for n in files({})}}
    for (student, notebooks), original in zip(hidden.items(), originals):
        submit(submitted, student, notebooks)
        chosen[student] = {**chosen[original], "copy_of": original}
    return chosen


def _kind(a: dict, b: dict) -> str:
    if a.get("copy_of") and a["copy_of"] == b.get("copy_of", b.get("name")):
        return "copy"
    shared = sum(a[p] == b[p] for p in ("glue", "span", "synthesizer", "position"))
    return f"{shared} part(s) copied" if shared else "honest"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--students", type=int, default=40, help="honest students (of 432 possible)")
    parser.add_argument("--seed", type=int, default=0, help="which students are drawn")
    args = parser.parse_args()
    from similarity_cohorts import RELEASE

    from autograder.exports.similarity import OVERALL, similarity_report

    with tempfile.TemporaryDirectory(prefix="similarity-honest-") as tmp:
        submitted = Path(tmp) / "submitted"
        chosen = _cohort(submitted, args.students, args.seed)
        for name, choice in chosen.items():
            choice["name"] = name
        started = time.monotonic()
        report = similarity_report(submitted, RELEASE)
        seconds = time.monotonic() - started
    overall = {(p.a, p.b): p.similarity for p in report.ranked(OVERALL)}
    kinds: dict[str, list[float]] = {}
    for a, b in itertools.combinations(sorted(chosen), 2):
        kind = _kind(chosen[a], chosen[b]) if "copy_of" in chosen[a] else _kind(chosen[b], chosen[a])
        kinds.setdefault(kind, []).append(overall.get((a, b), 0.0))
    print(f"{len(chosen)} students ({args.students} honest, 3 hidden copies), seed {args.seed}: "
          f"report in {seconds:.1f} s, {len(report.ranked(OVERALL))} pairs sharing any code, "
          f"{len(report.skipped)} things skipped")
    print(f"{'pairs':<22}{'count':>7}{'median':>9}{'95th pct':>10}{'max':>7}{'min':>7}")
    for kind in sorted(kinds, key=lambda k: (k != "honest", k != "copy", k)):
        values = sorted(kinds[kind])
        p95 = values[min(len(values) - 1, int(0.95 * len(values)))]
        print(f"{kind:<22}{len(values):>7}{statistics.median(values):>9.3f}{p95:>10.3f}{values[-1]:>7.3f}"
              f"{values[0]:>7.3f}")
    top_honest = max(kinds.get("honest", [0.0]))
    print(f"honest pairs at or above 0.5: {sum(v >= 0.5 for v in kinds.get('honest', []))}; "
          f"every copy above every honest pair: {min(kinds['copy']) > top_honest}")


if __name__ == "__main__":
    main()
