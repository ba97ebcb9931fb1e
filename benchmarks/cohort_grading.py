"""The instructor's whole workflow on a generated class, each step timed in CPU and wall time (root with bubblewrap).

    python benchmarks/cohort_grading.py --students 10 --serial 10 --workers 2 [--db URL] [--cache DIR] [--audit N]

Every student is a copy of the reference solutions with smoke-preset run files trained with a seed of its own
(``--seeds`` run sets, trained once into ``--cache`` and kept for the next run; students share them round-robin
past that), handed in through nbgrader's exchange. Each step is the command docs/hub.md and docs/grading.md give
the instructor, run in the course folder as a process of its own:

    nbgrader collect --update a5
    python -m autograder autograde a5 --workers W --preset smoke --data-dir WORLD
    python -m autograder grade submitted/ --out grades/ ... --gradebook URL --gradescope --workers W
    python -m autograder report . --assignment a5 --out grades/
    nbgrader generate_feedback a5
    nbgrader release_feedback a5
    nbgrader export

Each step's CPU time is that of its whole process tree, read from a cgroup v1 ``cpuacct`` group of its own that
the command starts in: the Dask workers, the units, the confined jobs, nbgrader's kernels and their sandboxes are
all in it, since the grader moves its jobs and sandboxes only in the memory, pids and cpu controllers. So a step's
CPU seconds are its own, whatever else the machine runs; its wall time is not (``--serial`` of the students on one
core with ``--workers 1``, then the whole class on ``--workers`` cores). Every student must end with full marks in
``grades.csv``, eight feedback pages and one total in nbgrader's export, else the timing is not of a real grading.
``--audit N`` then times ``grade --audit all`` of N students on one worker and on ``--workers``. ``--one-process``
runs the same steps in one process instead (``one_process_workflow.py``), timed as one step, with each step's lines
from its log: what the commands' own starts cost.
"""
from __future__ import annotations

import argparse
import csv
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from course_lib import layout

PRESET = "smoke"  # seconds of training: the runs' files are what matter here, not their accuracy
COHORT = 500  # the projected cohort
CPUACCT = Path("/sys/fs/cgroup/cpuacct")
WHEN = "2026-11-20 10:00:00.000000 UTC"  # every hand-in's time (before the collect; no due date is set)
GOAL_CPU, GOAL_SPEEDUP = 8.0, 1.9  # issue 50's goals: CPU-s of the whole workflow a student, speedup on 2 workers
ONE_PROCESS = Path(__file__).with_name("one_process_workflow.py")  # --one-process: every step in one process


@dataclass
class Timed:
    """One step's cost."""

    step: str  # its name
    cpu: float  # CPU seconds of its whole process tree (user and system)
    wall: float  # seconds of wall time


def _venv_env() -> dict[str, str]:
    return dict(os.environ, PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")


def _runs(cache: Path, world: Path, seed: int) -> Path:
    """The reference's smoke-preset run files trained with ``seed``, made once in ``cache``."""
    from course_lib.loader.load import load_notebooks, notebook_paths
    from course_lib.run_specs import RUNS
    from course_lib.runs import run

    outputs = cache / f"runs-{seed}"
    if not (outputs / "done").is_file():
        shutil.rmtree(outputs, ignore_errors=True)
        reference = load_notebooks(notebook_paths(layout.SOLUTIONS_DIR), module_name="reference_solutions")
        for name in RUNS:
            run(name, reference, preset=PRESET, data_dir=world, out_dir=outputs, seed=seed, progress=False)
        (outputs / "done").write_text("")
    return outputs


def _world(cache: Path) -> tuple[Path, Path]:
    """The default world and its grader-only answers, made once in ``cache``."""
    from course_lib.world import write_world

    world, answers = cache / "world", cache / "grader_only" / layout.TEST_ANSWERS
    if not (world / layout.WIKI).is_file() or not answers.is_file():
        answers.parent.mkdir(parents=True, exist_ok=True)
        write_world(world, seed=0, answers_path=answers)
    world.chmod(0o755)  # the grading kernel reads it as nobody
    for parent in world.parents:
        if parent == Path(tempfile.gettempdir()):
            break
        parent.chmod(parent.stat().st_mode | 0o055)
    return world, answers


def _course(root: Path, students: int, runs: list[Path], db: str | None) -> tuple[Path, str]:
    """A course folder with its assignment generated and ``students`` hand-ins in its exchange; its gradebook URL."""
    course, exchange = root / "course", root / "exchange"
    shutil.copytree(layout.SOLUTIONS_DIR, course / "source" / layout.ASSIGNMENT)
    url = db or f"sqlite:///{course / 'gradebook.db'}"
    (course / "nbgrader_config.py").write_text(
        "from autograder.nbgrader_glue.setup import configure_grading\nc = get_config()\n"
        f"c.CourseDirectory.course_id = 'bench'\nc.CourseDirectory.db_url = {url!r}\n"
        f"c.Exchange.root = {str(exchange)!r}\n"
        "c.ExchangeCollect.check_owner = False  # one account made every hand-in here\n"
        "configure_grading(c, timeout=120)\n")
    done = subprocess.run([sys.executable, "-m", "nbgrader", "generate_assignment", layout.ASSIGNMENT, "--force"],
                          cwd=course, env=_venv_env(), capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"nbgrader generate_assignment failed:\n{done.stderr[-2000:]}")
    inbound = exchange / "bench" / "inbound"
    inbound.mkdir(parents=True)
    for i in range(students):
        student = f"student{i:03d}"
        folder = inbound / f"{student}+{layout.ASSIGNMENT}+{WHEN}+{os.urandom(4).hex()}"
        shutil.copytree(layout.SOLUTIONS_DIR, folder)
        shutil.copytree(runs[i % len(runs)], folder / "outputs", ignore=shutil.ignore_patterns("done"))
        (folder / "timestamp.txt").write_text(WHEN)
        (folder / "submission_secret.txt").write_text(os.urandom(64).hex())
    return course, url


def _steps(world: Path, answers: Path, url: str, workers: int, db_given: bool) -> list[tuple[str, list[str]]]:
    """The workflow's commands, as the docs give them."""
    nbgrader, python = str(Path(sys.executable).parent / "nbgrader"), sys.executable
    db = ["--db", url] if db_given else []
    return [
        ("collect", [nbgrader, "collect", "--update", layout.ASSIGNMENT]),
        ("autograde", [python, "-m", "autograder", "autograde", layout.ASSIGNMENT, "--workers", str(workers),
                       "--preset", PRESET, "--data-dir", str(world), *db]),
        ("grade", [python, "-m", "autograder", "grade", "submitted/", "--out", "grades/", "--data-dir", str(world),
                   "--answers", str(answers), "--preset", PRESET, "--gradebook", url, "--gradescope",
                   "--workers", str(workers)]),
        ("report", [python, "-m", "autograder", "report", ".", "--assignment", layout.ASSIGNMENT, "--out", "grades/",
                    *db]),
        ("generate_feedback", [nbgrader, "generate_feedback", layout.ASSIGNMENT]),
        ("release_feedback", [nbgrader, "release_feedback", layout.ASSIGNMENT]),
        ("export", [nbgrader, "export"]),
    ]


def _usage(group: Path) -> float:
    return int((group / "cpuacct.usage").read_text()) / 1e9


def timed(name: str, argv: list[str], cwd: Path, cpus: set[int], log: Path) -> Timed:
    """Run ``argv`` in ``cwd`` on ``cpus`` in a cpuacct group of its own: its whole tree's CPU seconds, its wall time.
    Waits for every process of the tree to end (a sandbox idling out) before reading the CPU."""
    group = CPUACCT / f"cohort-bench-{os.getpid()}-{name}"
    group.mkdir()

    def enter() -> None:
        (group / "cgroup.procs").write_text(str(os.getpid()))
        os.sched_setaffinity(0, cpus)

    try:
        start = time.perf_counter()
        with open(log, "ab") as out:
            out.write(f"\n######## {name}: {' '.join(argv)}\n".encode())
            out.flush()
            code = subprocess.run(argv, cwd=cwd, env=_venv_env(), stdin=subprocess.DEVNULL, stdout=out,
                                  stderr=subprocess.STDOUT, preexec_fn=enter).returncode
        wall = time.perf_counter() - start
        while (group / "cgroup.procs").read_text().strip():
            time.sleep(0.1)
        cpu = _usage(group)
    finally:
        for _ in range(50):
            try:
                group.rmdir()
                break
            except OSError:
                time.sleep(0.1)
    if code != 0:
        sys.exit(f"{name} exited with status {code}: see {log}")
    return Timed(name, cpu, wall)


def _check(course: Path, students: int) -> str:
    """Every student at full marks, with eight feedback pages and one export total; that total."""
    with open(course / "grades" / "grades.csv") as f:
        rows = list(csv.DictReader(f))
    full = sum(float(r["score"]) == float(r["max_score"]) for r in rows)
    with open(course / "grades.csv") as f:
        exported = {r["student_id"]: (r["score"], r["max_score"]) for r in csv.DictReader(f)}
    pages = [len(list((course / "feedback" / f"student{i:03d}" / layout.ASSIGNMENT).glob("*.html")))
             for i in range(students)]
    if (full, len(exported), len(set(exported.values())), set(pages)) != (students, students, 1, {8}):
        sys.exit(f"not a real grading: {full} of {students} at full marks, export {sorted(set(exported.values()))}, "
                 f"pages {sorted(set(pages))}")
    return "{} of {}".format(*next(iter(exported.values())))


def workflow(root: Path, students: int, runs: list[Path], world: Path, answers: Path, db: str | None,
             workers: int, cpus: set[int], one_process: bool = False) -> list[Timed]:
    """The whole workflow on a fresh course of ``students``, ``workers`` at a time on ``cpus``; each step's cost (with
    ``one_process``, the one process's, and its steps' lines)."""
    course, url = _course(root, students, runs, db)
    log = root / "commands.log"
    costs = []
    steps = _steps(world, answers, url, workers, db is not None)
    if one_process:  # the very same commands, run by one process
        steps = [("one process", [sys.executable, str(ONE_PROCESS), json.dumps(steps)])]
    for name, argv in steps:
        costs.append(timed(name, argv, course, cpus, log))
        print(f"    {name:<18} {costs[-1].cpu:7.1f} CPU-s {costs[-1].wall:7.1f} s", flush=True)
    if one_process:
        for line in log.read_text(encoding="utf-8", errors="replace").splitlines():
            if line.startswith("STEP "):
                print(f"      {line[5:]}", flush=True)
    print(f"  {students} students on {len(cpus)} core(s), --workers {workers}: each at full marks, 8 pages, "
          f"export total {_check(course, students)}", flush=True)
    return costs


def _table(serial: list[Timed], parallel: list[Timed], n_serial: int, n_parallel: int, workers: int) -> None:
    print(f"\n{'step':<18} {'CPU-s a student':>16} {'(on ' + str(workers) + ')':>8} {'wall a student':>15} "
          f"{'on ' + str(workers):>6} {'speedup':>8}")
    for one, many in zip(serial, parallel):
        w1, w2 = one.wall / n_serial, many.wall / n_parallel
        print(f"{one.step:<18} {one.cpu / n_serial:16.2f} {many.cpu / n_parallel:8.2f} {w1:15.2f} {w2:6.2f} "
              f"{w1 / w2:8.2f}")
    cpu1, cpu2 = sum(t.cpu for t in serial) / n_serial, sum(t.cpu for t in parallel) / n_parallel
    w1, w2 = sum(t.wall for t in serial) / n_serial, sum(t.wall for t in parallel) / n_parallel
    print(f"{'whole workflow':<18} {cpu1:16.2f} {cpu2:8.2f} {w1:15.2f} {w2:6.2f} {w1 / w2:8.2f}")
    for cores in (1, 16):  # the work a student is what scales: wall time = work / cores
        print(f"projected for {COHORT} students on {cores:>2} core(s): {COHORT * cpu1 / cores / 3600:.2f} h")
    # each arm's own class: with --serial below --students, the two arms graded classes of two sizes
    print(f"work a student {cpu1:.1f} CPU-s on 1 worker ({n_serial} students), {cpu2:.1f} on {workers} workers "
          f"({n_parallel} students) (goal {GOAL_CPU:g}); speedup {w1 / w2:.2f} on {workers} workers "
          f"(goal {GOAL_SPEEDUP:g})" + ("" if n_serial == n_parallel else
                                       f": wall time a student of the {n_serial} against the {n_parallel}'s"))


def _audit(root: Path, world: Path, answers: Path, runs: list[Path], students: int, workers: int) -> None:
    """Seconds of ``grade --audit all`` of ``students`` on 1 worker and on ``workers``, less the grading alone."""
    submitted = root / "submitted"
    for i in range(students):
        folder = submitted / f"student{i:03d}" / layout.ASSIGNMENT
        shutil.copytree(layout.SOLUTIONS_DIR, folder)
        shutil.copytree(runs[i % len(runs)], folder / "outputs", ignore=shutil.ignore_patterns("done"))
    per = {}
    for count in (1, workers):
        seconds = []
        for audit in ([], ["--audit", "all"]):
            out = root / f"grades-{count}-{len(audit)}"
            argv = [sys.executable, "-m", "autograder", "grade", str(submitted), "--out", str(out), "--data-dir",
                    str(world), "--answers", str(answers), "--preset", PRESET, "--workers", str(count), *audit]
            cores = set(sorted(os.sched_getaffinity(0))[:count])
            seconds.append(timed(f"audit-{count}-{len(audit)}", argv, root, cores, root / "audit.log"))
        per[count] = (seconds[1].wall - seconds[0].wall) / students
        print(f"  {count} worker(s), {students} students: grade {seconds[0].wall:.1f} s, with --audit all "
              f"{seconds[1].wall:.1f} s ({seconds[1].cpu - seconds[0].cpu:.1f} CPU-s more)", flush=True)
    print(f"audit ({PRESET} preset): {per[1]:.1f} s a student on 1 worker, {per[workers]:.1f} s of wall time a "
          f"student on {workers} (speedup {per[1] / per[workers]:.2f})")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--students", type=int, default=10, help="students in the class graded on --workers cores")
    parser.add_argument("--serial", type=int, default=10, help="students of a class graded first on one core")
    parser.add_argument("--workers", type=int, default=2, help="workers (and cores) of the parallel workflow")
    parser.add_argument("--seeds", type=int, default=10, help="run sets trained (students share them past that)")
    parser.add_argument("--db", default=None, metavar="DB_URL",
                        help="gradebook URL for every step (default: SQLite in each generated course)")
    parser.add_argument("--cache", type=Path, default=Path(tempfile.gettempdir()) / "cohort-bench-cache",
                        help="where the world and the run sets are made once and kept")
    parser.add_argument("--audit", type=int, default=0, metavar="N",
                        help="then time `grade --audit all` of N students on 1 worker and on --workers")
    parser.add_argument("--keep", action="store_true", help="keep the generated courses (their path is printed)")
    parser.add_argument("--one-process", action="store_true",
                        help="run every step in one process (one_process_workflow.py) instead of the docs' commands")
    args = parser.parse_args(argv)
    if args.one_process and args.db:
        parser.error("--one-process grades into each course's own SQLite gradebook: leave out --db")
    if not (CPUACCT / "cpuacct.usage").is_file():
        sys.exit(f"needs cgroup v1's cpuacct controller at {CPUACCT} (and root)")
    cores = sorted(os.sched_getaffinity(0))
    if len(cores) < args.workers:
        sys.exit(f"--workers {args.workers} needs as many cores; this process has {len(cores)}")
    print(f"{os.cpu_count()} cores; load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    args.cache.mkdir(parents=True, exist_ok=True)
    world, answers = _world(args.cache)
    start = time.perf_counter()
    runs = [_runs(args.cache, world, seed) for seed in range(1, args.seeds + 1)]
    print(f"{len(runs)} run sets ready in {time.perf_counter() - start:.0f} s", flush=True)
    root = Path(tempfile.mkdtemp(prefix="cohort-bench-"))
    root.chmod(0o755)
    try:
        serial = workflow(root / "serial", args.serial, runs, world, answers, args.db, 1, set(cores[:1]),
                          args.one_process) if args.serial else []
        parallel = workflow(root / "parallel", args.students, runs, world, answers, args.db, args.workers,
                            set(cores[:args.workers]), args.one_process)
        if serial:
            _table(serial, parallel, args.serial, args.students, args.workers)
        if args.audit:
            _audit(root / "audit", world, answers, runs, args.audit, args.workers)
    finally:
        if args.keep:
            print(f"kept {root}")
        else:
            shutil.rmtree(root, ignore_errors=True)
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
