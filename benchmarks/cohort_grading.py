"""The whole grading pipeline on a generated cohort, one worker against several, in one run (root with bubblewrap).

    python benchmarks/cohort_grading.py --students 8 --serial 4 --workers 2 [--db URL] [--audit N]

Every submission is a copy of the reference solutions with the smoke preset's run
outputs (trained once, then copied), so every one does the whole work of a real
submission: nbgrader's autograde of all eight notebooks in the confined grading kernel
(``autograder autograde``), then the score of record (``autograder grade``: a confined
probe job over every check and a confined decode job over the params), both into one
gradebook (SQLite in the course folder, or ``--db``, e.g. a PostgreSQL server's URL).

``--serial`` of the students are graded one after another (``--workers 1``), then the
whole cohort on ``--workers`` Dask workers. Prints seconds per submission for each grader
and for both, the hours 500 students would take on 1 and 16 cores at that rate, and
`speedup X.XX` of the parallel pipeline over the serial one (wall time per submission).
``--audit N`` then times ``grade --audit all`` of N students (every run retrained with the
course's reference code, in the smoke preset) on one worker and on ``--workers``, against the same grading
without the audit: the audit's seconds per student and how they spread over the workers.
"""
from __future__ import annotations

import argparse
import csv
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from autograder.__main__ import main as autograder
from course_lib import layout
from course_lib.loader.load import load_notebooks, notebook_paths
from course_lib.run_specs import RUNS
from course_lib.runs import run
from course_lib.world import write_world

PRESET = "smoke"  # seconds of training: the runs' files are what matter here, not their accuracy
COHORT = 500  # the projected cohort


def _course(root: Path, students: int, db: str | None) -> tuple[Path, Path, Path, str]:
    """A course folder (generated assignment, ``students`` copies of the reference with run outputs), its world
    and grader-only answers, and its gradebook URL."""
    answers = root / "grader_only" / layout.TEST_ANSWERS
    answers.parent.mkdir()
    world = write_world(root / "world", seed=0, answers_path=answers)[layout.WIKI].parent
    course = root / "course"
    shutil.copytree(layout.SOLUTIONS_DIR, course / "source" / layout.ASSIGNMENT)
    url = db or f"sqlite:///{course / 'gradebook.db'}"
    (course / "nbgrader_config.py").write_text(
        "from autograder.nbgrader_glue.setup import configure_grading\nc = get_config()\n"
        f"c.CourseDirectory.course_id = 'bench'\nc.CourseDirectory.db_url = {url!r}\nconfigure_grading(c)\n")
    env = dict(os.environ, PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
    done = subprocess.run([sys.executable, "-m", "nbgrader", "generate_assignment", layout.ASSIGNMENT, "--force"],
                          cwd=course, env=env, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"nbgrader generate_assignment failed:\n{done.stderr[-2000:]}")
    reference = load_notebooks(notebook_paths(layout.SOLUTIONS_DIR), module_name="reference_solutions")
    first = course / "submitted" / "student000" / layout.ASSIGNMENT
    shutil.copytree(layout.SOLUTIONS_DIR, first)
    for name in RUNS:
        run(name, reference, preset=PRESET, data_dir=world, out_dir=first / "outputs", progress=False)
    for i in range(1, students):
        shutil.copytree(first, course / "submitted" / f"student{i:03d}" / layout.ASSIGNMENT)
    return course, world, answers, url


def _pipeline(course: Path, world: Path, answers: Path, url: str, students: list[str], workers: int,
              out: Path) -> tuple[float, float]:
    """Seconds of nbgrader autograde and of autograder grade for ``students`` on ``workers`` workers."""
    chosen = [option for s in students for option in ("--student", s)]
    start = time.perf_counter()
    code = autograder(["autograde", layout.ASSIGNMENT, "--course", str(course), "--workers", str(workers),
                       "--preset", PRESET, "--data-dir", str(world), "--force", *chosen])
    autograde = time.perf_counter() - start
    if code != 0:
        sys.exit(f"autograder autograde failed (see {course / 'autograde_log.txt'})")
    submitted = out / "submitted"  # the students of this grading only
    for student in students:
        shutil.copytree(course / "submitted" / student, submitted / student)
    start = time.perf_counter()
    code = autograder(["grade", str(submitted), "--out", str(out / "grades"), "--data-dir", str(world),
                       "--answers", str(answers), "--preset", PRESET, "--timeout", "300", "--workers", str(workers),
                       "--gradebook", url, "--force"])
    grade = time.perf_counter() - start
    with open(out / "grades" / "grades.csv") as f:
        rows = list(csv.DictReader(f))
    full = sum(float(r["score"]) == float(r["max_score"]) for r in rows)
    print(f"  {workers} worker(s), {len(students)} submissions: nbgrader autograde {autograde:.1f} s, "
          f"autograder grade {grade:.1f} s; {full} with full marks", flush=True)
    if full != len(students):
        sys.exit("a reference copy lost points: the timing is not of a real grading")
    return autograde, grade


def _audit(world: Path, answers: Path, students: list[str], course: Path, workers: int, out: Path) -> float:
    """Seconds of ``grade --audit all`` of ``students`` on ``workers`` workers, less the same grading without it."""
    submitted = out / "submitted"
    for student in students:
        shutil.copytree(course / "submitted" / student, submitted / student)
    seconds = []
    for audit in ([], ["--audit", "all"]):
        start = time.perf_counter()
        code = autograder(["grade", str(submitted), "--out", str(out / f"grades{len(audit)}"), "--data-dir",
                           str(world), "--answers", str(answers), "--preset", PRESET, "--workers", str(workers),
                           "--force", *audit])
        seconds.append(time.perf_counter() - start)
        if code != 0:
            sys.exit("autograder grade failed while timing the audit")
    with open(out / "grades2" / "audit.csv") as f:
        audited = list(csv.DictReader(f))
    print(f"  {workers} worker(s), {len(students)} students: grade {seconds[0]:.1f} s, with --audit all "
          f"{seconds[1]:.1f} s ({len(audited)} run splits retrained)", flush=True)
    return seconds[1] - seconds[0]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--students", type=int, default=8, help="submissions in the generated cohort")
    parser.add_argument("--serial", type=int, default=4, help="of them, graded one after another first")
    parser.add_argument("--workers", type=int, default=2, help="Dask workers of the parallel grading")
    parser.add_argument("--db", default=None, metavar="DB_URL",
                        help="gradebook URL for both graders (default: SQLite in the generated course)")
    parser.add_argument("--audit", type=int, default=0, metavar="N",
                        help="then time `grade --audit all` of N students on 1 worker and on --workers")
    args = parser.parse_args(argv)
    print(f"{os.cpu_count()} cores; load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    with tempfile.TemporaryDirectory(prefix="cohort-bench-") as tmp:
        root = Path(tmp)
        start = time.perf_counter()
        course, world, answers, url = _course(root, args.students, args.db)
        students = sorted(p.name for p in (course / "submitted").iterdir())
        print(f"cohort of {args.students} built in {time.perf_counter() - start:.0f} s; gradebook "
              f"{url.split(':')[0]}; grading:", flush=True)
        serial = [s / args.serial for s in _pipeline(course, world, answers, url, students[:args.serial], 1,
                                                      root / "serial")]
        parallel = [s / args.students for s in _pipeline(course, world, answers, url, students, args.workers,
                                                          root / "parallel")]
        if args.audit:
            chosen = students[:args.audit]
            one = _audit(world, answers, chosen, course, 1, root / "audit1") / len(chosen)
            many = _audit(world, answers, chosen, course, args.workers, root / "audit2") / len(chosen)
            print(f"audit ({PRESET} preset): {one:.1f} s per student on 1 worker, {many:.1f} s of wall time per "
                  f"student on {args.workers} (speedup {one / many:.2f})")
    names = ("nbgrader autograde", "autograder grade")
    for name, one, many in zip(names, serial, parallel):
        print(f"{name}: {one:.1f} s per submission on 1 worker, {many:.1f} s of wall time per submission on "
              f"{args.workers} (speedup {one / many:.2f})")
    per = sum(serial)
    print(f"whole pipeline: {per:.1f} s of work per submission; {sum(parallel):.1f} s of wall time per submission on "
          f"{args.workers} workers")
    for cores in (1, 16):  # work per submission is what scales: wall time = work / cores
        print(f"projected for {COHORT} students on {cores:>2} core(s): "
              + ", ".join(f"{name} {COHORT * s / cores / 3600:.2f} h" for name, s in zip(names, serial))
              + f", both {COHORT * per / cores / 3600:.2f} h")
    print(f"speedup {per / sum(parallel):.2f} ({args.workers} workers over 1, the whole pipeline)")
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
