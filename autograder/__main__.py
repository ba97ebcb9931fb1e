"""``python -m autograder grade SUBMITTED_DIR --out DIR``: grade every submission in an nbgrader
submitted/ folder (and ``autograde``, ``report``, ``bundle``, ``similarity``: see ``--help``)."""
from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from autograder.cli_paths import absolute_paths
from autograder.early_start import (
    AUTOGRADE_COMMAND_PRELOAD,
    GRADE_COMMAND_PRELOAD,
    REPORT_COMMAND_PRELOAD,
    start_early,
)
from autograder.ownership import kept_by_owner
from course_lib import layout


def _cluster_options(parser: argparse.ArgumentParser, done: str) -> None:
    """--workers and --scheduler: where the students' tasks run, the same for both graders."""
    parser.add_argument("--workers", type=int, default=len(os.sched_getaffinity(0)),
                        help=f"students {done} at once, each a task on a local Dask cluster of this many worker "
                             "processes (default: one per core); 1 takes them one after another in this process")
    parser.add_argument("--scheduler", default=None, metavar="ADDRESS",
                        help="use an existing Dask cluster (e.g. tcp://host:8786) instead of a local one")


@kept_by_owner  # as root in the instructor's course folder: what it writes stays the instructor's
def main(argv: list[str] | None = None) -> int:
    """The command line; returns the exit status."""
    parser = argparse.ArgumentParser(prog="python -m autograder", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    grade = sub.add_parser("grade", help="grade a submitted/ folder")
    grade.add_argument("submitted", help="nbgrader's submitted/ folder: <student>/<assignment>/...")
    grade.add_argument("--out", required=True, help="where grades.csv, reasons.json (and Gradescope files) go")
    grade.add_argument("--assignment", default=layout.ASSIGNMENT)
    grade.add_argument("--data-dir", default=str(layout.DEFAULT_DATA_DIR),
                       help=f"{layout.WIKI} and {layout.DEV} the students used")
    grade.add_argument("--answers", required=True,
                       help=f"the grader-only test answers ({layout.TEST_ANSWERS}), kept where students cannot "
                            "read them")
    grade.add_argument("--dataset", default="synthetic", choices=["synthetic", "original"], help="which bars apply")
    grade.add_argument("--preset", default=layout.DEFAULT_PRESET,
                       help="preset the students trained with (model shape and bars)")
    grade.add_argument("--timeout", type=float, default=600,
                       help="seconds per confined job (as autograde gives a student's notebooks)")
    grade.add_argument("--student-timeout", type=float, default=900,
                       help="seconds of all of one student's confined jobs together (a submission that runs slowly "
                            "on purpose costs no more)")
    grade.add_argument("--cell-timeout", type=float, default=120,
                       help="seconds per notebook cell while a student's notebooks load (nbgrader's own limit)")
    grade.add_argument("--student", action="append", default=None, metavar="ID",
                       help="grade only this student (repeatable); the output files then cover those students")
    grade.add_argument("--audit", default=None, metavar="K",
                       help="retrain K randomly chosen students' runs (or 'all') with the course's reference code on "
                            "the grading data, with the graded preset and their own hyperparameters and recorded "
                            "seeds, and flag a run whose handed-in accuracy is far above its retrained one "
                            "(audit.csv, flags.csv)")
    grade.add_argument("--audit-zero", action="store_true", help="zero the points of a flagged run split")
    grade.add_argument("--audit-timeout", type=float, default=3600,
                       help="seconds of one audited student's retraining (every audited run part)")
    grade.add_argument("--seed", type=int, default=None,
                       help="the grading seed of every student, e.g. the one a student's result records, to grade "
                            "again with the very same inputs (default: a fresh one per student, recorded)")
    grade.add_argument("--memory-mb", type=int, default=4096, help="memory limit per confined job")
    grade.add_argument("--gradescope", action="store_true", help="also write gradescope/<student>/results.json")
    grade.add_argument("--gradebook", default=None, metavar="DB_URL",
                       help="also write the trusted scores into this nbgrader gradebook (sqlite:///gradebook.db, "
                            "postgresql://user@host/db), "
                            "replacing the scores the students' own kernels reported for the autograded cells")
    grade.add_argument("--unconfined", action="store_true",
                       help="grade even where confinement is unavailable (submission code then runs with only time "
                            "and memory limits: it can read what the grader can); without it the grader refuses")
    _cluster_options(grade, "graded")
    grade.add_argument("--force", action="store_true",
                       help="grade every student again, even those whose files and settings are unchanged since the "
                            "results kept in OUT/results/")
    auto = sub.add_parser("autograde", help="nbgrader autograde of every student, several at once (Dask)")
    auto.add_argument("assignment", nargs="?", default=layout.ASSIGNMENT)
    auto.add_argument("--course", default=".", help="the nbgrader course folder (nbgrader_config.py, submitted/)")
    auto.add_argument("--student", action="append", default=None,
                      help="autograde only this student (repeatable); default: every folder in submitted/")
    auto.add_argument("--db", default=None, metavar="DB_URL",
                      help="the gradebook (default: the course's nbgrader_config.py); SQLite writes take turns")
    auto.add_argument("--preset", default=layout.DEFAULT_PRESET,
                      help="COURSE_PRESET for the grading kernels: the preset the students trained with")
    auto.add_argument("--data-dir", default=str(layout.DEFAULT_DATA_DIR),
                      help="COURSE_DATA_DIR for the grading kernels: the data the students used")
    auto.add_argument("--out-dir", default="outputs",
                      help="COURSE_OUT_DIR for the grading kernels: each submission's run files, relative to its "
                           "notebooks")
    _cluster_options(auto, "autograded")
    auto.add_argument("--force", action="store_true",
                      help="autograde every student again, even those unchanged since their last autograde")
    auto.add_argument("--timeout", type=float, default=600,
                      help="seconds for one student's whole autograde, every notebook (each cell also has nbgrader's "
                           "own time limit)")
    auto.add_argument("--unconfined", action="store_true",
                      help="let the grading kernel run where confinement is unavailable (submission code then "
                           "reads what the grader can); without it the kernel refuses to start")
    report = sub.add_parser("report", help="why each student lost points in an nbgrader autograde")
    report.add_argument("course", help="the nbgrader course folder (gradebook.db, submitted/, autograded/)")
    report.add_argument("--assignment", default=layout.ASSIGNMENT)
    report.add_argument("--db", default=None, help="gradebook URL (default: sqlite:///COURSE/gradebook.db)")
    report.add_argument("--out", default=None, help="write nbgrader_reasons.csv here")
    report.add_argument("--reasons", default=None,
                        help="autograder grade's reasons.json, whose reasons explain the cells it judged (default: "
                             "COURSE/grades/reasons.json when it exists)")
    bundle = sub.add_parser("bundle",
                            help="the student copy: a fresh release, course_lib and the course's data, zipped")
    bundle.add_argument("--out", default="dist", help="folder for the student folder and its zip")
    bundle.add_argument("--data-dir", default=None,
                        help="the course's student data (wiki.txt and the question files, never the answers): the "
                             "notebooks then train on it by default; without it they build the public default world")
    bundle.add_argument("--preset", default=layout.DEFAULT_PRESET,
                        help="the preset the course grades: the notebooks' default training preset")
    inbound = sub.add_parser("inbound", help="the exchange's inbound entries nbgrader collect refuses (not their "
                             "owner's, a time later than the collect, ...), and why; run in the course folder")
    inbound.add_argument("assignment", nargs="?", default=layout.ASSIGNMENT)
    inbound.add_argument("--remove", action="store_true",
                         help="take them out of the exchange (deleted, or hidden from every collect when their owner "
                              "keeps them read-only); needs no root")
    from autograder.term.commands import add_term_commands

    add_term_commands(sub)
    similar = sub.add_parser("similarity", help="pairwise similarity of all of the students' code across a cohort")
    similar.add_argument("submitted", help="nbgrader's submitted/ folder: <student>/<assignment>/...")
    similar.add_argument("--out", required=True, help="where similarity.csv, skipped.csv and similarity.html go")
    similar.add_argument("--assignment", default=layout.ASSIGNMENT)
    similar.add_argument("--release", default=None, help="the release notebooks (default: the course's "
                         "release/ASSIGNMENT beside submitted/, else notebooks/ASSIGNMENT)")
    similar.add_argument("--base", action="append", default=[], metavar="FILE",
                         help="code you gave out beside the release (a .py file, or a notebook's code cells), left "
                              "out like the release's; repeatable")
    args = absolute_paths(parser.parse_args(argv))  # relative paths mean the folder it runs in
    if args.command == "similarity":
        return _similarity(args)
    if args.command == "report":
        return _report(args)
    if args.command == "autograde":
        return _autograde(args)
    if args.command == "bundle":
        return _bundle(args)
    if args.command in ("extend", "lms"):
        from autograder.term.commands import run_term_command

        return run_term_command(args)
    if args.command == "inbound":
        from autograder.nbgrader_glue.refused_inbound import main as inbound_main

        return inbound_main(args.assignment, args.remove)
    return _grade(args)

def _preset_problem(preset: str, dataset: str | None = None) -> str | None:
    """Why --preset (with --dataset's bars) cannot be used, in one line; None when it can."""
    from course_lib.presets import get_preset

    try:
        get_preset(preset)
        if dataset is not None:
            from autograder.checks.bars import load_bars

            load_bars(dataset, preset)
    except ValueError as err:
        return str(err)
    return None


def _refuse_unconfined(problem: str | None, unconfined: bool, what: str) -> int | None:
    """Exit status 2 and a line when confinement is missing and not waived; a warning if waived."""
    if problem and not unconfined:
        print(f"error: refusing to {what}: submission code cannot be confined here: {problem}. Grade as root on "
              "Linux with bubblewrap and cgroups (docs/grading.md), or pass --unconfined to accept the risk.",
              file=sys.stderr)
        return 2
    if problem:
        print(f"warning: {what} UNCONFINED ({problem}): submission code can read whatever this user can",
              file=sys.stderr)
    return None


def _grade(args) -> int:
    from autograder import confinement
    from autograder.confinement import Limits, template

    submitted, data_dir, answers = Path(args.submitted), Path(args.data_dir), Path(args.answers)
    for path, what in ((submitted, "the submitted/ folder"),
                       (data_dir / layout.WIKI, f"the data folder's {layout.WIKI}"),
                       (data_dir / layout.DEV, f"the data folder's {layout.DEV}"), (answers, "the answers file")):
        if not path.exists():
            print(f"error: {path} not found ({what})", file=sys.stderr)
            return 2
    if not answers.is_file():
        print(f"error: {answers} is a folder, not the answers file ({layout.TEST_ANSWERS})", file=sys.stderr)
        return 2
    release = layout.RELEASE_DIR.parent / args.assignment
    unknown = (f"unknown assignment {args.assignment!r}: no release notebooks in {release}"
               if not any(release.glob("*.ipynb")) else "")
    for problem in (_preset_problem(args.preset, args.dataset), "--workers must be at least 1" * (args.workers < 1),
                    unknown):
        if problem:
            print(f"error: {problem}", file=sys.stderr)
            return 2
    if args.student:
        missing = [s for s in args.student if not (submitted / s).is_dir()]
        if missing:
            print(f"error: no submission folder for {', '.join(map(repr, missing))} in {submitted}", file=sys.stderr)
            return 2
    problem = confinement.status()
    refused = _refuse_unconfined(problem, args.unconfined, "grade")
    if refused is not None:
        return refused
    start_early(GRADE_COMMAND_PRELOAD, [(template.PRELOAD, True)] if problem is None else [], args.scheduler)
    from autograder.grading.folder import grade_folder, summary_table
    from autograder.grading.results import settings_for
    from autograder.units.dask import Cluster

    settings = settings_for(data_dir, answers, args.dataset, args.preset, timeout=args.timeout,
                            student_seconds=args.student_timeout, cell_seconds=args.cell_timeout,
                            limits=Limits(memory_mb=args.memory_mb), confined=problem is None, seed=args.seed)
    audit = None
    if args.audit is not None:
        from autograder.grading.audit import AuditSettings

        if args.audit != "all" and not (args.audit.isdigit() and int(args.audit) > 0):
            print(f"error: --audit takes a number of students or 'all', not {args.audit!r}", file=sys.stderr)
            return 2
        audit = AuditSettings(None if args.audit == "all" else int(args.audit), args.audit_timeout, args.audit_zero,
                              args.seed)
    run = grade_folder(submitted, args.assignment, Path(args.out), settings, args.gradescope,
                       cluster=Cluster(args.workers, args.scheduler), force=args.force, only=args.student,
                       audit=audit)
    results = run.results
    print(summary_table(results))
    print(f"wrote {Path(args.out) / 'grades.csv'}: {run.graded} student(s) graded, {run.reused} unchanged since "
          "the last grading and kept (--force grades them again)")
    unfit = [r.student for r in results if any("of another shape than" in p.reason for p in r.parts)]
    if unfit and len(unfit) >= max(1, len(results) // 2):
        print(f"warning: the params of {len(unfit)} of {len(results)} students do not fit the {args.preset!r} "
              "preset's model: is --preset the preset they trained with?", file=sys.stderr)
    notes, late = [], []
    if args.gradebook:
        from autograder.exports.gradebook import trusted_cell_scores, write_trusted_scores
        from autograder.term.late import settle_in

        scores = {r.student: trusted_cell_scores((p.part, p.points) for p in r.parts) for r in results}
        notes = write_trusted_scores(args.gradebook, args.assignment, scores,
                                     settle=settle_in(Path.cwd(), args.assignment, set(scores), late))
        print(f"gradebook: the autograded cells and run cells of {len(scores)} student(s) now hold the trusted "
              "scores, each late penalty recomputed from them; manually graded cells are untouched")
    from autograder.exports.step_summary import print_summary
    from autograder.grading.folder import grade_problems

    return print_summary("grade", grade_problems(run, notes, late))

def _autograde(args) -> int:
    from autograder import confinement
    from autograder.term.course import course_db_url, course_source

    course, data_dir = Path(args.course).resolve(), Path(args.data_dir).resolve()
    for path, what in ((course / "submitted", "the course's submitted/ folder"),
                       (course_source(course, args.assignment), f"the source of assignment {args.assignment!r}"),
                       (data_dir / layout.WIKI, f"the data folder's {layout.WIKI}")):
        if not path.exists():
            print(f"error: {path} not found ({what})", file=sys.stderr)
            return 2
    for problem in (_preset_problem(args.preset), "--workers must be at least 1" * (args.workers < 1)):
        if problem:
            print(f"error: {problem}", file=sys.stderr)
            return 2
    if args.student:
        missing = [s for s in args.student if not (course / "submitted" / s).is_dir()]
        if missing:
            print(f"error: no submission for {', '.join(map(repr, missing))} in {course / 'submitted'}",
                  file=sys.stderr)
            return 2
    unconfined = confinement.status()
    refused = _refuse_unconfined(unconfined, args.unconfined, "autograde")
    if refused is not None:
        return refused
    from autograder.nbgrader_glue.setup import course_grading_problem

    problem = course_grading_problem(course)
    if problem:
        print(f"error: refusing to autograde: {problem}", file=sys.stderr)
        return 2
    from autograder.nbgrader_glue.zygote_server import template_preload

    # nbgrader's autograde kernels' template (autograder.nbgrader_glue.zygote: the sandbox server's python -m)
    start_early(AUTOGRADE_COMMAND_PRELOAD, [(template_preload(autograde=True), False)] if unconfined is None else [],
                args.scheduler)
    from autograder.collecting.flags import cohort_flags
    from autograder.collecting.near_copies import dev_gold
    from autograder.exports.csv_safe import write_csv
    from autograder.exports.step_summary import print_summary
    from autograder.nbgrader_glue.autograde import (
        AutogradeSettings,
        autograde_cohort,
        autograde_problems,
        collect_course,
        write_log,
    )
    from autograder.units.dask import Cluster

    cohort = collect_course(course, args.assignment, args.student)
    for folder in cohort.refused:  # said before any grading starts; these are not autograded
        print(f"refused: 'submitted/{folder.shown}' cannot be a student id: {folder.why}", file=sys.stderr)
    flags = cohort_flags(cohort.students, args.assignment, course_source(course, args.assignment),
                         gold=dev_gold(data_dir))
    write_csv(course / "autograde_flags.csv", ["file", "student", "other_student", "why"],
              [[f.file, f.student, f.other, f.why] for f in flags])
    settings = AutogradeSettings(
        course, args.assignment, args.db or course_db_url(course), args.db is not None,
        (("COURSE_PRESET", args.preset), ("COURSE_DATA_DIR", str(data_dir)), ("COURSE_OUT_DIR", args.out_dir)),
        force=args.force, timeout=args.timeout, unconfined=args.unconfined)
    students = [c.student for c in cohort.students]
    hashes = {c.student: c.prints.digest if c.folder is not None else "" for c in cohort.students}
    results = autograde_cohort(settings, students, hashes, Cluster(args.workers, args.scheduler))
    collect_notes = {c.student: c.dropped for c in cohort.students}
    log = write_log(results, course / "autograde_log.txt", collect_notes)
    done = [r for r in results if r.ok and not r.skipped]
    skipped = [r.student for r in results if r.skipped]
    print(f"nbgrader autograde: {len(done)} student(s) autograded"
          + (f" ({sum(r.seconds for r in done) / len(done):.1f} s each)" if done else "")
          + (f", {len(skipped)} unchanged since they were autograded, left as they were (--force redoes them)"
             if skipped else ""))
    if flags:
        print(f"{len(flags)} flag(s) for you to look at in {course / 'autograde_flags.csv'}")
    print(f"wrote {log}")
    return print_summary("autograde", autograde_problems(settings, cohort, results))

def _bundle(args) -> int:
    from autograder.release.bundle import BundleError, build_bundle

    try:
        path = build_bundle(args.out, args.data_dir, args.preset)
    except (BundleError, ValueError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    if args.data_dir is None:
        print("warning: no --data-dir: the copy carries no course data, so the notebooks build the public default "
              "world; students graded on your course's data would lose every run point", file=sys.stderr)
    print(f"wrote {path}")
    return 0


def _report(args) -> int:
    if not Path(args.course).is_dir():
        print(f"error: {args.course} is not a folder", file=sys.stderr)
        return 2
    start_early(REPORT_COMMAND_PRELOAD, [], None)  # its units (a student each) read the gradebook here
    from nbgrader.api import MissingEntry

    from autograder.exports.report import explain, report_problems, summary, write_report

    try:
        totals, reasons = explain(args.course, args.assignment, args.db,
                                  reasons_file=Path(args.reasons) if args.reasons else None)
    except MissingEntry:
        print(f"error: no assignment {args.assignment!r} in the course's gradebook", file=sys.stderr)
        return 2
    print(summary(totals, reasons))
    if args.out:
        print(f"wrote {write_report(reasons, Path(args.out) / 'nbgrader_reasons.csv')}")
    from autograder.exports.step_summary import Problem, print_summary
    from autograder.term.late import current_lateness

    late = current_lateness(args.db or f"sqlite:///{Path(args.course) / 'gradebook.db'}", args.assignment)
    return print_summary("report", report_problems(reasons) + [Problem(x.student, x.line()) for x in late])

def _similarity(args) -> int:
    from autograder.collecting.collect import release_folder
    from autograder.exports.similarity import OVERALL, similarity_report
    from autograder.exports.similarity_files import write_report

    course = Path(args.submitted).resolve().parent
    release = Path(args.release) if args.release else release_folder(args.assignment, course)
    for path, what in ((Path(args.submitted), "the submitted/ folder"), (release, "the release notebooks")):
        if not path.is_dir():
            print(f"error: {path} not found ({what})", file=sys.stderr)
            return 2
    base = tuple(Path(b).resolve() for b in args.base)
    for path in base:
        if not path.is_file():
            print(f"error: {path} not found (--base)", file=sys.stderr)
            return 2
    report = similarity_report(Path(args.submitted), release, args.assignment, base=base)
    print("class-weighted  raw  pair")
    for p in report.ranked(OVERALL)[:10]:
        print(f"{p.similarity:14.0%} {p.raw:4.0%}  {p.a}  {p.b}")
    print(f"{len(report.students)} students, {len(report.skipped)} things skipped")
    for path in write_report(report, Path(args.out), args.assignment):
        print(f"wrote {path}")
    return 0

if __name__ == "__main__":
    sys.exit(main())
