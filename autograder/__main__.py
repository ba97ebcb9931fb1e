"""``python -m autograder grade SUBMITTED_DIR --out DIR``: grade every submission in an nbgrader submitted/ folder."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from course_lib import layout


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m autograder", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    grade = sub.add_parser("grade", help="grade a submitted/ folder")
    grade.add_argument("submitted", help="nbgrader's submitted/ folder: <student>/<assignment>/...")
    grade.add_argument("--out", required=True, help="where grades.csv, reasons.json (and Gradescope files) go")
    grade.add_argument("--assignment", default=layout.ASSIGNMENT)
    grade.add_argument("--data-dir", default=str(layout.DEFAULT_DATA_DIR),
                       help=f"{layout.WIKI} and {layout.DEV} the students used")
    grade.add_argument("--answers", required=True,
                       help=f"the grader-only test answers ({layout.TEST_ANSWERS}), kept where students cannot read them")
    grade.add_argument("--dataset", default="synthetic", choices=["synthetic", "original"], help="which bars apply")
    grade.add_argument("--preset", default=layout.DEFAULT_PRESET, help="preset the students trained with (model shape and bars)")
    grade.add_argument("--timeout", type=float, default=300, help="seconds per confined job")
    grade.add_argument("--memory-mb", type=int, default=4096, help="memory limit per confined job")
    grade.add_argument("--gradescope", action="store_true", help="also write gradescope/<student>/results.json")
    grade.add_argument("--gradebook", default=None, metavar="DB_URL",
                       help="also write the trusted scores into this nbgrader gradebook (e.g. sqlite:///gradebook.db), "
                            "replacing the scores the students' own kernels reported for the autograded cells")
    grade.add_argument("--unconfined", action="store_true",
                       help="grade even where confinement is unavailable (submission code then runs with only time "
                            "and memory limits: it can read what the grader can); without it the grader refuses")
    report = sub.add_parser("report", help="why each student lost points in an nbgrader autograde")
    report.add_argument("course", help="the nbgrader course folder (gradebook.db, submitted/, autograded/)")
    report.add_argument("--assignment", default=layout.ASSIGNMENT)
    report.add_argument("--db", default=None, help="gradebook URL (default: sqlite:///COURSE/gradebook.db)")
    report.add_argument("--out", default=None, help="write nbgrader_reasons.csv here")
    bundle = sub.add_parser("bundle", help="the student copy: release notebooks and course_lib, zipped")
    bundle.add_argument("--out", default="dist", help="folder for the student folder and its zip")
    args = parser.parse_args(argv)
    if args.command == "report":
        return _report(args)
    if args.command == "bundle":
        from .bundle import build_bundle

        print(f"wrote {build_bundle(args.out)}")
        return 0
    return _grade(args)

def _grade(args) -> int:
    from . import confinement
    from .confinement import Limits
    from .grade import grade_folder, settings_for, summary_table

    submitted, data_dir, answers = Path(args.submitted), Path(args.data_dir), Path(args.answers)
    for path, what in ((submitted, "the submitted/ folder"), (data_dir / layout.WIKI, f"the data folder's {layout.WIKI}"),
                       (data_dir / layout.DEV, f"the data folder's {layout.DEV}"), (answers, "the answers file")):
        if not path.exists():
            print(f"error: {path} not found ({what})", file=sys.stderr)
            return 2
    problem = confinement.status()
    if problem and not args.unconfined:
        print(f"error: refusing to grade: submission code cannot be confined here: {problem}. Grade as root on "
              "Linux with bubblewrap and cgroups (see the README), or pass --unconfined to accept the risk.",
              file=sys.stderr)
        return 2
    if problem:
        print(f"warning: grading UNCONFINED ({problem}): submission code can read whatever this user can",
              file=sys.stderr)
    settings = settings_for(data_dir, answers, args.dataset, args.preset, timeout=args.timeout,
                            limits=Limits(memory_mb=args.memory_mb), confined=problem is None)
    results = grade_folder(submitted, args.assignment, Path(args.out), settings, args.gradescope)
    print(summary_table(results))
    print(f"wrote {Path(args.out) / 'grades.csv'}")
    unfit = [r.student for r in results if any("does not hold params of the model" in p.reason for p in r.parts)]
    if unfit and len(unfit) >= max(1, len(results) // 2):
        print(f"warning: the params of {len(unfit)} of {len(results)} students do not fit the {args.preset!r} "
              "preset's model: is --preset the preset they trained with?", file=sys.stderr)
    if args.gradebook:
        from .gradebook_sync import write_trusted_scores
        from .registry import BY_ID

        scores = {r.student: {(BY_ID[p.part].notebook, p.part): p.points for p in r.parts if p.part in BY_ID}
                  for r in results}
        for note in write_trusted_scores(args.gradebook, args.assignment, scores):
            print(f"gradebook: {note}")
        print(f"gradebook: the autograded cells of {len(scores)} student(s) now hold the trusted scores; "
              "manually graded cells are untouched")
    return 0

def _report(args) -> int:
    from .nbgrader_report import explain, summary, write_report

    if not Path(args.course).is_dir():
        print(f"error: {args.course} is not a folder", file=sys.stderr)
        return 2
    totals, reasons = explain(args.course, args.assignment, args.db)
    print(summary(totals, reasons))
    if args.out:
        print(f"wrote {write_report(reasons, Path(args.out) / 'nbgrader_reasons.csv')}")
    return 0

if __name__ == "__main__":
    sys.exit(main())
