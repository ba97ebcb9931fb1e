"""The term's commands: ``python -m autograder extend`` (one student's extension) and ``lms`` (an LMS's download)."""
from __future__ import annotations

import argparse
import datetime
import os
from pathlib import Path


def add_term_commands(sub) -> None:
    """Their parsers, under the command line's subcommands."""
    extend = sub.add_parser("extend", help="give one student an extension on an assignment, in nbgrader's gradebook "
                            "(their penalty recomputed); run in the course folder")
    extend.add_argument("assignment")
    extend.add_argument("student", help="the student id (as in submitted/)")
    for unit in ("days", "hours", "minutes"):
        extend.add_argument(f"--{unit}", type=float, default=0.0,
                            help=f"{unit} added to the due date for this student (all of them 0: no extension)")
    extend.add_argument("--db", default=None, help="gradebook URL (default: the course's nbgrader_config.py)")
    intake = sub.add_parser("lms", help="hand-ins downloaded from Canvas or Moodle (a zip, or the folder it was "
                            "unzipped into) into submitted/, each student's zip opened in their own unit; run in the "
                            "course folder")
    intake.add_argument("assignment")
    intake.add_argument("download", help="the LMS's download: its zip, or the folder it was unzipped into")
    intake.add_argument("--from", dest="lms", choices=["canvas", "moodle"], default=None,
                        help="the LMS whose file names to read (default: c.LmsFileNames.named_regexp of the course's "
                             "nbgrader_config.py)")
    intake.add_argument("--regexp", default=None,
                        help="a file-name regexp of your own, matched against each file's whole path below the "
                             "download, naming the groups 'name' (or 'student_id') and 'file'")


def run_term_command(args: argparse.Namespace) -> int:
    """Run the one parsed; its exit status. Both work in the course folder the command is typed in."""
    if args.command == "extend":
        from autograder.term.extensions import main as extend_main

        return extend_main(Path.cwd(), args.assignment, args.student,
                           datetime.timedelta(days=args.days, hours=args.hours, minutes=args.minutes), args.db)
    from autograder.term.lms_intake import main as intake_main

    return intake_main(Path.cwd(), args.assignment, Path(os.path.abspath(args.download)), args.lms, args.regexp)
