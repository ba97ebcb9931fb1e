"""``python -m autograder grade SUBMITTED_DIR --out DIR``: grade every submission in an nbgrader submitted/ folder."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .grade import grade_folder, summary_table


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m autograder", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    grade = sub.add_parser("grade", help="grade a submitted/ folder")
    grade.add_argument("submitted", help="nbgrader's submitted/ folder: <student>/<assignment>/...")
    grade.add_argument("--out", required=True, help="where grades.csv, reasons.json (and Gradescope files) go")
    grade.add_argument("--assignment", default="a5")
    grade.add_argument("--data-dir", default="data/world", help="wiki.txt and birth_dev.tsv the students used")
    grade.add_argument("--answers", default=None, help="grader-only birth_test.tsv (default: DATA_DIR/birth_test.tsv)")
    grade.add_argument("--dataset", default="synthetic", choices=["synthetic", "original"], help="which bars apply")
    grade.add_argument("--preset", default="cpu", help="preset the students trained with (model shape and bars)")
    grade.add_argument("--timeout", type=float, default=300, help="seconds per sandboxed job")
    grade.add_argument("--memory-mb", type=int, default=4096, help="address-space limit per sandboxed job")
    grade.add_argument("--gradescope", action="store_true", help="also write gradescope/<student>/results.json")
    report = sub.add_parser("report", help="why each student lost points in an nbgrader autograde")
    report.add_argument("course", help="the nbgrader course folder (gradebook.db, submitted/, autograded/)")
    report.add_argument("--assignment", default="a5")
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
    submitted = Path(args.submitted)
    if not submitted.is_dir():
        print(f"error: {submitted} is not a folder", file=sys.stderr)
        return 2
    data_dir = Path(args.data_dir)
    answers = Path(args.answers) if args.answers else data_dir / "birth_test.tsv"
    results = grade_folder(submitted, args.assignment, Path(args.out), data_dir, answers, args.dataset, args.preset,
                           args.timeout, args.memory_mb, args.gradescope)
    print(summary_table(results))
    print(f"wrote {Path(args.out) / 'grades.csv'}")
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
