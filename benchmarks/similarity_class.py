"""Copies in a real class: disguised copies against honest pairs who share a snippet, raw and class-weighted, and the
report's cost.

    .venv/bin/python benchmarks/similarity_class.py [--students 30] [--shared 8] [--seed 0] [--base]
    .venv/bin/python benchmarks/similarity_class.py --timing 500

A class (``tests/similarity_cohorts.py``, ``write_class``): honest students each writing one of six
answers per part (each answer held by a sixth of the class), three scratch cells each, ``--shared`` of
them holding one cell verbatim (a study group's snippet: two dataset helpers, 25 lines), and one copy
of a distinct honest student per disguise of ``tests/code_disguises.py`` (renamed, reordered, dead
code, comments, loops rewritten, helper extracted, cells split, moved to the cell after, and two
mixes). An honest pair wrote every part with different answers. Printed: each copy's overall score
against its original (raw and class-weighted) and its rank, the top honest pair, whether every copy
ranks above every honest pair, and on each graded cell's row the copy's score against the best
honest pair that wrote that part apart. ``--base`` gives the snippet to the report as base code (the
instructor posted it). ``--timing N`` writes a class of N students (every tenth a copy) and times the
units (collect, parse, fingerprint: each student's own) and the driver's comparison apart. Figures go
to benchmarks/FINDINGS.md ("Similarity report in a class").
"""
from __future__ import annotations

import argparse
import itertools
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO), str(REPO / "tests")]


def _scores(report, cell: str) -> dict[tuple[str, str], tuple[float, float]]:
    return {(p.a, p.b): (p.similarity, p.raw) for p in report.ranked(cell)}


def _pair(a: str, b: str) -> tuple[str, str]:
    return (a, b) if a < b else (b, a)


def study(args) -> None:
    from code_disguises import DISGUISES
    from honest_code import SHARED_SNIPPET, SHARED_SNIPPET_MORE
    from similarity_cohorts import PART_ROWS, RELEASE, apart, write_class

    from autograder.exports.similarity import OVERALL, Settings, similarity_report

    with tempfile.TemporaryDirectory(prefix="similarity-class-") as tmp:
        snippet = (SHARED_SNIPPET, SHARED_SNIPPET_MORE) if args.long else (SHARED_SNIPPET,)
        members = write_class(Path(tmp) / "submitted", args.students, args.shared, DISGUISES, args.seed, snippet)
        base = ()
        if args.base:
            (Path(tmp) / "snippet.py").write_text("\n\n".join(snippet), encoding="utf-8")
            base = (Path(tmp) / "snippet.py",)
        started = time.monotonic()
        report = similarity_report(Path(tmp) / "submitted", RELEASE, settings=Settings(max_pairs=10 ** 6), base=base)
        seconds = time.monotonic() - started
    overall = _scores(report, OVERALL)
    honest = [_pair(a, b) for a, b in itertools.combinations(sorted(members), 2) if apart(members[a], members[b])]
    group = [p for p in honest if members[p[0]].snippet and members[p[1]].snippet]
    top = {i: max((overall.get(p, (0.0, 0.0))[i], p) for p in honest) for i in (0, 1)}
    order = sorted(overall, key=lambda p: -overall[p][0])
    print(f"{len(members)} students ({args.students} honest, {args.shared} sharing the {len(snippet)}-cell snippet, "
          f"{len(DISGUISES)} "
          f"copies), seed {args.seed}, snippet {'given as base code' if base else 'not given'}: report in "
          f"{seconds:.1f} s")
    print(f"honest pairs (every part written apart): {len(honest)}, {len(group)} of them both sharing the snippet; "
          f"top class-weighted {top[0][0]:.3f} ({' '.join(top[0][1])}), top raw {top[1][0]:.3f} "
          f"({' '.join(top[1][1])})")
    print(f"{'copy':<12}{'weighted':>9}{'raw':>7}{'rank':>6}  rows: copy / best honest pair that wrote the part apart")
    above = {0: True, 1: True}
    for kind in DISGUISES:
        student = f"copy-{kind}"
        pair = _pair(student, members[student].copy_of)
        weighted, raw = overall.get(pair, (0.0, 0.0))
        above = {0: above[0] and weighted > top[0][0], 1: above[1] and raw > top[1][0]}
        rows = []
        for cell in PART_ROWS:
            scores = _scores(report, cell)
            best = max((scores.get(_pair(a, b), (0.0,))[0] for a, b in itertools.combinations(sorted(members), 2)
                        if apart(members[a], members[b], cell)), default=0.0)
            rows.append(f"{cell.split('-')[0]}-{cell.split('-')[1][:4]} {scores.get(pair, (0.0,))[0]:.2f}/{best:.2f}")
        print(f"{kind:<12}{weighted:>9.3f}{raw:>7.3f}{order.index(pair) + 1 if pair in overall else '-':>6}  "
              + ", ".join(rows))
    print(f"every copy above every honest pair: class-weighted {above[0]}, raw {above[1]}")


def timing(count: int, seed: int) -> None:
    from code_disguises import DISGUISES
    from similarity_cohorts import RELEASE, write_class

    from autograder.exports import similarity as sim

    copies = tuple(DISGUISES[i % len(DISGUISES)] for i in range(count // 10))
    with tempfile.TemporaryDirectory(prefix="similarity-timing-") as tmp:
        submitted = Path(tmp) / "submitted"
        started = time.monotonic()
        members = write_class(submitted, count - len(copies), count // 10, copies, seed)
        print(f"{len(members)} students written in {time.monotonic() - started:.0f} s")
        release = sim.release_of(RELEASE)
        settings = sim.Settings()
        one = next(iter(sorted(members)))
        graded = {name: {} for name in release.notebooks}
        for c in release.cells:
            graded[c.notebook][c.grade_id] = c.answers
        started = time.monotonic()
        for _ in range(5):
            sim.read_student(one, str(submitted / one / "a5"), graded, settings, release.code)
        unit = (time.monotonic() - started) / 5
        started = time.monotonic()
        code, skipped = sim.collect_code(submitted, "a5", release, settings)
        units = time.monotonic() - started
        started = time.monotonic()
        report = sim.compare(release.cells, code, settings)
        driver = time.monotonic() - started
    print(f"one student's unit work (parse, fingerprint, follow each cell's code), in this process: {unit:.2f} s")
    print(f"units (collect, parse, fingerprint; 2 workers): {units:.0f} s for {len(code)} students "
          f"({units / max(len(code), 1):.2f} s a student); driver's comparison: {driver:.1f} s; "
          f"{report.sharing.get('overall', 0)} pairs share code overall, {len(report.pairs)} pairs kept in all rows; "
          f"{len(skipped)} skipped")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--students", type=int, default=30, help="honest students")
    parser.add_argument("--shared", type=int, default=8, help="honest students holding the study group's cell")
    parser.add_argument("--seed", type=int, default=0, help="who writes which answer, who shares, who is copied")
    parser.add_argument("--long", action="store_true", help="the group shares a second cell too (36 more lines)")
    parser.add_argument("--base", action="store_true", help="give the shared cells to the report as base code")
    parser.add_argument("--timing", type=int, default=0, help="only time the report on a class of N students")
    args = parser.parse_args()
    if args.timing:
        timing(args.timing, args.seed)
    else:
        study(args)


if __name__ == "__main__":
    main()
