"""The instructor's whole workflow in one process: what the seven commands' own starts cost (a study, not a tool).

    python benchmarks/one_process_workflow.py STEPS_JSON   (in a course folder; STEPS_JSON: [[name, argv], ...])

``cohort_grading.py --one-process`` runs it on its fresh courses with its own steps (``cohort_grading._steps``), each
command run in this process: nbgrader's through ``NbGraderAPI`` and ``ExportApp`` (as formgrader runs them), the
course's (``python -m autograder ...``) through ``autograder.__main__.main``; one units' fork server, started first,
preloads every step's modules (each command's early preload, release_feedback's, and the feedback pages' with their
warm-up). Prints a ``STEP`` line per step: its wall time and, inside cohort_grading's ``cpuacct`` group, the CPU
seconds the group used meanwhile.
"""
from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

CPUACCT = Path("/sys/fs/cgroup/cpuacct")  # cgroup v1, where cohort_grading times each step


def _group_cpu() -> float | None:
    """CPU seconds of this process's cgroup v1 cpuacct group (its whole tree, in cohort_grading), or None."""
    for line in Path("/proc/self/cgroup").read_text().splitlines():
        _, controllers, path = line.split(":", 2)
        if "cpuacct" in controllers.split(","):
            usage = CPUACCT / path.strip().lstrip("/") / "cpuacct.usage"
            return int(usage.read_text()) / 1e9 if usage.is_file() else None
    return None


def main(argv: list[str]) -> int:
    (steps,) = argv
    start = time.perf_counter()
    from autograder.early_start import AUTOGRADE_COMMAND_PRELOAD, GRADE_COMMAND_PRELOAD, REPORT_COMMAND_PRELOAD
    from autograder.nbgrader_glue.feedback import PAGE_PRELOAD, PAGE_WARMUP
    from autograder.nbgrader_glue.release_feedback import RELEASE_STEP
    from autograder.units.unit import start_fork_server

    start_fork_server(tuple(sorted({*GRADE_COMMAND_PRELOAD, *AUTOGRADE_COMMAND_PRELOAD, *REPORT_COMMAND_PRELOAD,
                                    *RELEASE_STEP.preload, *PAGE_PRELOAD, *PAGE_WARMUP})))
    from nbgrader.apps import ExportApp, NbGraderAPI
    from nbgrader.apps.baseapp import NbGrader
    from nbgrader.coursedir import CourseDirectory

    import autograder.__main__ as commands

    app = NbGrader()
    app.config_file_paths.append(os.getcwd())
    app.load_config_file()  # the course's nbgrader_config.py, as every nbgrader command loads it
    api = NbGraderAPI(CourseDirectory(config=app.config), config=app.config)
    print(f"STEP {'start':<18} {time.perf_counter() - start:7.2f} s {_group_cpu() or 0:7.2f} CPU-s", flush=True)

    def export(options: list[str]) -> int:
        exporter = ExportApp(config=app.config)
        exporter.initialize(options)
        exporter.start()
        return 0

    # nbgrader's subcommand -> the same work through its API (the assignment is the command's last word)
    nbgrader = {"collect": lambda a: api.collect(a[-1], update="--update" in a),
                "generate_feedback": lambda a: api.generate_feedback(a[-1]),
                "release_feedback": lambda a: api.release_feedback(a[-1]),
                "export": lambda a: export(a[1:])}
    for name, command in json.loads(steps):
        began, cpu = time.perf_counter(), _group_cpu() or 0
        if command[1:3] == ["-m", "autograder"]:
            outcome = commands.main(command[3:])
        else:  # [the nbgrader executable, subcommand, ...]
            outcome = nbgrader[command[1]](command[1:])
        print(f"STEP {name:<18} {time.perf_counter() - began:7.2f} s {(_group_cpu() or 0) - cpu:7.2f} CPU-s",
              flush=True)
        if outcome != 0 and not (isinstance(outcome, dict) and outcome.get("success")):
            print(str(outcome.get("error") if isinstance(outcome, dict) else outcome)[-3000:], flush=True)
            return 1
    return 0


if __name__ == "__main__":  # (the units' fork server imports this file as __main__'s module: nothing runs then)
    sys.exit(main(sys.argv[1:]))
