"""What ``autograder grade`` writes for the instructor and the students.

The LMS takes ``nbgrader export``'s total, which holds these points once ``--gradebook`` wrote them.
- grades.csv (instructor): a row per student: score, max score, a column per check and run split.
- reasons.json, gradescope/<student>/results.json (students): per part, points and a grader-written
  reason.
- flags.csv (instructor): pairs of students (or a student and the solution, the audit or the
  course's reach) sharing files or runs, and runs above the course's reach
  (``autograder.collecting.flags``, ``autograder.grading.plausibility``).
- refused.csv (instructor): folders of submitted/ whose names cannot be student ids, and why.
- instructor_log.txt (instructor): per student, the grading seed, what collect left out, each job's
  output.
Every CSV cell goes through ``csv_safe`` (no formula), and a student's own folder under
gradescope/ is named by the id the collect step accepted (one path component, never hidden).
The shared files are the driver's; each student's own file is written in that student's unit
(``autograder.units``), so a file system that refuses one student's name fails that student
alone, named in the instructor's log and in ``export_failures.csv``.
"""
from __future__ import annotations

import json
from pathlib import Path

from autograder.checks import registry
from autograder.collecting.flags import Flag
from autograder.collecting.safe_files import shown
from autograder.exports.csv_safe import write_csv
from autograder.units.limits import UnitLimits
from autograder.units.stage import Step, outcomes

EXPORT_STEP = Step("export", UnitLimits(seconds=30, memory_mb=512), preload=("autograder.exports.outputs",))


def write_outputs(results, flags: list[Flag], refused, out: Path, gradescope: bool) -> None:
    """Write the files above to ``out``; each student's Gradescope file in that student's unit."""
    graded = {p.part for r in results for p in r.parts}  # (a course may release only some notebooks)
    names = [c.grade_id for c in registry.CHECKS if c.grade_id in graded]
    names += list(dict.fromkeys(p.part for r in results for p in r.parts if p.part not in names))
    rows = []
    for r in results:
        points = {p.part: p.points for p in r.parts}
        rows.append([r.student, f"{r.score:g}", f"{r.max_score:g}", *(f"{points.get(n, 0):g}" for n in names)])
    write_csv(out / "grades.csv", ["student_id", "score", "max_score", *names], rows)
    with open(out / "reasons.json", "w", encoding="utf-8") as f:
        json.dump({r.student: [vars(p) for p in r.parts] for r in results}, f, indent=1, ensure_ascii=False)
    write_csv(out / "flags.csv", ["file", "student", "other_student", "why"],
              [[f.file, f.student, f.other, f.why] for f in flags])
    write_csv(out / "refused.csv", ["folder", "why"], [[r.shown, r.why] for r in refused])
    with open(out / "instructor_log.txt", "w", encoding="utf-8") as f:
        for r in refused:
            f.write(f"===== refused folder '{r.shown}': {r.why}\n")
        for r in results:
            f.write(f"===== {shown(r.student)}: {r.score:g}/{r.max_score:g}\n" + "\n".join(r.log) + "\n")
    failures = []
    if gradescope:
        done = outcomes(EXPORT_STEP, len(results), lambda i: (write_gradescope, (str(out), results[i])), workers=2)
        failures = [(r.student, o.failure) for r, o in zip(results, done) if not o.ok]
    write_csv(out / "export_failures.csv", ["student_id", "file", "why"],
              [[student, "gradescope/results.json", why] for student, why in failures])
    with open(out / "instructor_log.txt", "a", encoding="utf-8") as f:
        f.writelines(f"===== {shown(student)}: gradescope/results.json not written: {why}\n" for student,
                     why in failures)


def write_gradescope(out: str, r) -> None:
    """In the student's unit: their Gradescope results file."""
    folder = Path(out) / "gradescope" / r.student
    folder.mkdir(parents=True, exist_ok=True)
    tests = [{"name": p.part, "score": p.points, "max_score": p.max_points, "output": p.reason} for p in r.parts]
    (folder / "results.json").write_text(json.dumps({"score": r.score, "tests": tests}, indent=1, ensure_ascii=False),
                                         encoding="utf-8")
