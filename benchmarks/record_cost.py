"""The score of record's cost for one submission: the CPU seconds its confined jobs take, and its wall time.

    python benchmarks/record_cost.py --rounds 5 [--folder DIR]

Grades a copy of the reference solutions with the smoke preset's run files (trained once
into ``--folder``, kept for the next run) ``--rounds`` times, as ``autograder grade`` grades
one student: the probe job (every notebook run, every check) and the decode job. Wall time
on a shared machine moves with whatever else runs; the CPU seconds the jobs spend move far
less, so this prints both. The jobs' CPU is read from cgroup v1's cpuacct controller (this
process and its children: the jobs keep it, since the grader moves them only in the memory,
pids and cpu controllers), less this process's own. Run it from two checkouts, alternately, to
compare them. Root with bubblewrap, as ``autograder grade``.
"""
from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import tempfile
import time
from pathlib import Path

from autograder.collecting.collect import Collected
from autograder.grading.grade import grade_submission, load_gold
from autograder.grading.results import settings_for
from course_lib import layout
from course_lib.loader.load import load_notebooks, notebook_paths
from course_lib.run_specs import RUNS
from course_lib.runs import run
from course_lib.world import write_world

CPUACCT = Path("/sys/fs/cgroup/cpuacct")


def _submission(folder: Path) -> tuple[Path, Path, Path]:
    """The world, its grader-only answers and a reference submission with smoke run files, made once in ``folder``."""
    world, answers, submission = folder / "world", folder / "grader_only" / layout.TEST_ANSWERS, folder / "sub" / "a5"
    if not (world / layout.WIKI).is_file():
        answers.parent.mkdir(parents=True, exist_ok=True)
        write_world(world, seed=0, answers_path=answers)
    if not (submission / "outputs" / "done").is_file():
        shutil.rmtree(submission, ignore_errors=True)
        shutil.copytree(layout.SOLUTIONS_DIR, submission)
        reference = load_notebooks(notebook_paths(layout.SOLUTIONS_DIR), module_name="reference_solutions")
        for name in RUNS:
            run(name, reference, preset="smoke", data_dir=world, out_dir=submission / "outputs", progress=False)
        (submission / "outputs" / "done").write_text("")
    return world, answers, submission


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5, help="gradings of the submission")
    parser.add_argument("--folder", type=Path, default=Path(tempfile.gettempdir()) / "record-cost",
                        help="where the world and the submission are made (kept between runs)")
    args = parser.parse_args()
    if not (CPUACCT / "cpuacct.usage").is_file():
        raise SystemExit(f"needs cgroup v1's cpuacct controller at {CPUACCT}")
    world, answers, submission = _submission(args.folder)
    settings = settings_for(world, answers, "synthetic", "smoke")
    gold = load_gold(settings)
    group = CPUACCT / f"record-cost-{os.getpid()}"
    group.mkdir()
    try:
        (group / "cgroup.procs").write_text(str(os.getpid()))
        cpus, walls = [], []
        for seed in range(args.rounds):
            usage, own, started = int((group / "cpuacct.usage").read_text()), time.process_time(), time.monotonic()
            result = grade_submission(Collected("reference", submission), settings, gold, seed=seed)
            walls.append(time.monotonic() - started)
            cpus.append((int((group / "cpuacct.usage").read_text()) - usage) / 1e9 - (time.process_time() - own))
            probe = re.search(r"probe job: ([0-9.]+) s", "\n".join(result.log))
            print(f"round {seed}: jobs' CPU {cpus[-1]:.1f} s, wall {walls[-1]:.1f} s (probe job "
                  f"{probe.group(1) if probe else '?'} s), {result.score:g}/{result.max_score:g}", flush=True)
        print(f"mean of {args.rounds}: jobs' CPU {statistics.mean(cpus):.2f} s (sd {statistics.pstdev(cpus):.2f}), "
              f"wall {statistics.mean(walls):.1f} s per submission")
    finally:
        (CPUACCT / "cgroup.procs").write_text(str(os.getpid()))  # back to the root, so the group can go
        group.rmdir()


if __name__ == "__main__":
    main()
