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
    args = parser.parse_args(argv)
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


if __name__ == "__main__":
    sys.exit(main())
