"""`autograder grade` on a generated cohort, one worker against several, in one run (root with bubblewrap).

    python benchmarks/cohort_grading.py --students 8 --workers 2 --rounds 2 [--nbgrader 1]

Every submission is a copy of the reference solutions with the smoke preset's run
outputs (trained once, then copied), so every one does the whole work of a real
submission: a confined probe job over every check and a confined decode job over the
params. Serial and parallel gradings take turns for ``--rounds`` rounds (other work on a
shared machine comes and goes); medians are reported. Prints seconds per submission for
each grader, the hours 500 students would take on 1 and 16 cores at that rate, and
`speedup X.XX` of the parallel grading over the serial one. With ``--nbgrader K`` it also
times nbgrader's own autograde (in the confined grading kernel) of K of the submissions,
one after another.
"""
from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from autograder.cohort import Cluster
from autograder.grade import grade_folder, settings_for
from course_lib import layout
from course_lib.notebook_loader import load_notebooks, notebook_paths
from course_lib.runs import RUNS, run
from course_lib.world import write_world

PRESET = "smoke"  # seconds of training: the runs' files are what matter here, not their accuracy
COHORT = 500  # the projected cohort


def _cohort(root: Path, students: int) -> tuple[Path, Path, Path]:
    """A world, its grader-only answers, and ``students`` copies of the reference with its run outputs."""
    answers = root / "grader_only" / layout.TEST_ANSWERS
    answers.parent.mkdir()
    world = write_world(root / "world", seed=0, answers_path=answers)[layout.WIKI].parent
    reference = load_notebooks(notebook_paths(layout.SOLUTIONS_DIR), module_name="reference_solutions")
    first = root / "submitted" / "student000" / layout.ASSIGNMENT
    shutil.copytree(layout.SOLUTIONS_DIR, first)
    for name in RUNS:
        run(name, reference, preset=PRESET, data_dir=world, out_dir=first / "outputs", progress=False)
    for i in range(1, students):
        shutil.copytree(first, root / "submitted" / f"student{i:03d}" / layout.ASSIGNMENT)
    return root / "submitted", world, answers


def _grade(submitted: Path, world: Path, answers: Path, out: Path, workers: int) -> float:
    settings = settings_for(world, answers, "synthetic", PRESET, timeout=300)
    start = time.perf_counter()
    graded = grade_folder(submitted, layout.ASSIGNMENT, out, settings, progress=False, cluster=Cluster(workers))
    seconds = time.perf_counter() - start
    full = sum(r.score == r.max_score for r in graded.results)
    print(f"  {workers} worker(s): {seconds:.1f} s for {len(graded.results)} submissions, {full} with full marks",
          flush=True)
    return seconds


def _nbgrader(submitted: Path, world: Path, root: Path, count: int) -> float:
    """nbgrader autograde of ``count`` submissions in a course folder of their own (the grading kernel)."""
    course = root / "course"
    shutil.copytree(layout.SOLUTIONS_DIR, course / "source" / layout.ASSIGNMENT)
    for student in sorted(p.name for p in submitted.iterdir())[:count]:
        shutil.copytree(submitted / student, course / "submitted" / student)
    (course / "nbgrader_config.py").write_text(
        "from autograder.nbgrader_setup import configure_grading\nc = get_config()\n"
        "c.CourseDirectory.course_id = 'bench'\nconfigure_grading(c, timeout=120)\n")
    env = dict(os.environ, PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
               COURSE_PRESET=PRESET, COURSE_DATA_DIR=str(world), COURSE_OUT_DIR="outputs")
    for step in (["generate_assignment", layout.ASSIGNMENT, "--force"], None):
        if step is None:
            start = time.perf_counter()
            step = ["autograde", layout.ASSIGNMENT, "--force"]
        done = subprocess.run([sys.executable, "-m", "nbgrader", *step], cwd=course, env=env, capture_output=True,
                              text=True)
        if done.returncode != 0:
            sys.exit(f"nbgrader {step[0]} failed:\n{done.stderr[-2000:]}")
    seconds = time.perf_counter() - start
    print(f"  nbgrader autograde: {seconds:.1f} s for {count} submission(s), one after another", flush=True)
    return seconds


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--students", type=int, default=8, help="submissions in the generated cohort")
    parser.add_argument("--workers", type=int, default=2, help="Dask workers of the parallel grading")
    parser.add_argument("--rounds", type=int, default=2, help="serial and parallel gradings, taking turns")
    parser.add_argument("--nbgrader", type=int, default=0, metavar="K", help="also time nbgrader autograde of K")
    args = parser.parse_args(argv)
    print(f"{os.cpu_count()} cores; load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    with tempfile.TemporaryDirectory(prefix="cohort-bench-") as tmp:
        root = Path(tmp)
        start = time.perf_counter()
        submitted, world, answers = _cohort(root, args.students)
        print(f"cohort of {args.students} built in {time.perf_counter() - start:.0f} s; grading:", flush=True)
        serials, parallels = [], []
        for i in range(args.rounds):
            serials.append(_grade(submitted, world, answers, root / f"serial{i}", 1))
            parallels.append(_grade(submitted, world, answers, root / f"parallel{i}", args.workers))
        serial, parallel = statistics.median(serials), statistics.median(parallels)
        nbgrader = _nbgrader(submitted, world, root, args.nbgrader) / args.nbgrader if args.nbgrader else None
    per = serial / args.students
    print(f"autograder grade: {per:.1f} s per submission on 1 worker, "
          f"{parallel / args.students:.1f} s per submission of wall time on {args.workers}")
    if nbgrader is not None:
        print(f"nbgrader autograde: {nbgrader:.1f} s per submission on 1 core")
    for cores in (1, 16):  # work per submission is what scales: wall time = work / cores
        hours = COHORT * per / cores / 3600
        line = f"projected for {COHORT} students on {cores:>2} core(s): autograder grade {hours:.2f} h"
        if nbgrader is not None:
            theirs = COHORT * nbgrader / cores / 3600
            line += f", nbgrader autograde {theirs:.2f} h, both {hours + theirs:.2f} h"
        print(line)
    rounds = ", ".join(f"{s / p:.2f}" for s, p in zip(serials, parallels))
    print(f"speedup {serial / parallel:.2f} ({args.workers} workers over 1, medians; each round: {rounds})")
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
