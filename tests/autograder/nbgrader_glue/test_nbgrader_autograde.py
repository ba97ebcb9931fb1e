"""nbgrader end to end in a temporary course: generate, submit honest and hostile work, autograde, export.

The autograde is the instructor's `autograder autograde`: every student's nbgrader autograde
a task on two Dask workers (one killed mid-student), into a real PostgreSQL gradebook. The
course holds two notebooks of the series (02 glue, 03 span corruption: 27 points, and 6 for 02's run, which
only `autograder grade` gives, none of these students handing in a run); the
hostile submissions carry only notebook 03, to keep the batch inside the suite's time budget.
"""
from __future__ import annotations

import csv
import html
import os
import shutil
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import dask_faults
import nbformat
import pytest
from conftest import SOLUTIONS

from autograder.exports.report import explain

# the module's one batch autograde of every submission takes ~165 s on a quiet 2-core machine;
# a slower or busier CI machine needs room (each submission has its own cell timeout inside)
pytestmark = pytest.mark.timeout(900)

NB02, NB03 = "02_finetune_without_pretraining.ipynb", "03_span_corruption.ipynb"
ROOT = hasattr(os, "geteuid") and os.geteuid() == 0
CELL_TIMEOUT = 30  # seconds: the hanging submission waits this long once; the reference's slowest cell takes 5
PAGE_SECONDS = 10  # a feedback page's unit (an honest page takes under 1 s; the nested <div> would take minutes)
SLOW_PAGE = "edits_test_cell"  # whose notebook nests HTML deep enough to render for minutes
KILLED = "reference"  # the worker autograding this student is killed (kill -9) once: the retry must grade it
MEMORY_MB = 3000

MAX_SCORE = 33  # 27 for the code, 6 in 02's run cells (scored 0 by the kernel; the grader's points replace it)
# student -> total score of nbgrader's own run (of 33): its kernels judge no check, public (02-glue-config 4,
# 03-span-public 5) or hidden (02-glue-pretrained 3, 03-span-hidden 15); each says its points come from the course's
# grader, and scores 0 until `grade --gradebook` (only a kernel that forges its own cells gets points here)
EXPECTED = {
    "reference": 0, "blank": 0, "partial": 0, "edits_test_cell": 0, "deletes_test_cell": 0, "hangs": 0,
    "memory_hog": 0, "syntax_error": 0, "fake_success": 0, "corrupt_json": 0,
    # (edits_test_cell's markdown also nests 60,000 <div>: its feedback page would render for minutes, and is stopped)
    # links to grader-only files and a peer's work, a FIFO and a socket named like notebook 03, beside the
    # released 02: the collect step leaves them all out, so nbgrader never reads them
    "links": 0, "fifo": 0, "socket": 0,
    "injects_html": 0,  # script in a markdown cell and in outputs: inert in formgrader and feedback
    "spews": 0,  # 48 MB printed before the answer: the autograded notebook keeps 16 MB of it
    # looks for the hidden checks' inputs and the grading seed in its kernel (there are none), and opens the grader-only
    # answers (not readable)
    "snoops": 0,
}
CANARY = "CANARY-world-seed-3f9a1c"  # grader_only/world-seed.txt: in no autograded, collected or feedback file
if ROOT:  # without confinement this one could kill the grader itself
    EXPECTED["tampers"] = 0
# a kernel can make its own test cells pass: nbgrader's run believes it, the trusted grader does not
EXPECTED["kernel_forges"] = 20  # (the hidden cell too: it replaced the module the cell imports)
# student -> score of record after `autograder grade --gradebook` (the code itself judged outside the kernel)
# (a few students: each one regraded costs a confined probe job; the cohort tests cover the rest)
TRUSTED = {"reference": 27, "deletes_test_cell": 20, "fake_success": 0, "kernel_forges": 0, "snoops": 20}
if ROOT:
    TRUSTED["tampers"] = 0
XSS = "window.STUDENT_XSS=1"
# a cell that looks in its kernel for what only the grader should know: the hidden checks' inputs, the reference's
# outputs for them, a grading seed (the hidden checks' code, hidden.py, is bound in and holds none: a checkout under
# /tmp shows it to the glob)
SNOOP = """import glob, os
print("SNOOP-ENV", sorted(k for k in os.environ if "HIDDEN" in k or "GRADING_SEED" in k))
print("SNOOP-FILES", sorted(p for p in glob.glob("/tmp/**/*hidden*", recursive=True) + glob.glob("/job/**/*.pt",
      recursive=True) if not p.endswith(".py")))
import autograder.checks.hidden as hidden
print("SNOOP-API", [n for n in ("hidden_inputs", "HIDDEN_INPUTS") if hasattr(hidden, n)])
"""  # what a student's HTML would run in the instructor's formgrader or a feedback page


class _ActiveScript(HTMLParser):
    """Every place a page would run ``XSS``: a <script>'s text or an on* attribute of any tag."""

    def __init__(self):
        super().__init__()
        self.found, self._in_script = [], False

    def handle_starttag(self, tag, attrs):
        self._in_script = tag == "script"
        self.found += [f"<{tag} {k}>" for k, v in attrs if k.startswith("on") and XSS in (v or "")]

    def handle_data(self, data):
        if self._in_script and XSS in data:
            self.found.append("<script>")


def active_script(page: str) -> list[str]:
    parser = _ActiveScript()
    parser.feed(page)
    return parser.found


KERNEL_FORGE = """import sys, types
import autograder
import course_lib.checks as checks
checks.check_span_corruption_basic = lambda *args, **kwargs: print("span corruption: all public checks passed")
fake = types.ModuleType("autograder.checks.hidden")
fake.check_span_corruption_hidden = lambda *args, **kwargs: None
sys.modules["autograder.checks.hidden"] = autograder.checks.hidden = fake
"""


def _cell(nb, grade_id):
    return next(c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") == grade_id)


def _submissions(course: Path, answers: Path) -> dict[str, dict[str, object]]:
    """student -> {notebook name: notebook, or raw text for a corrupt file}"""
    solutions = {n: nbformat.read(SOLUTIONS / n, as_version=4) for n in (NB02, NB03)}

    def release(name):
        return nbformat.read(course / "release" / "a5" / name, as_version=4)

    def filled(name):  # the release with the reference answers typed in
        nb = release(name)
        for c in nb.cells:
            meta = c.metadata.get("nbgrader", {})
            if meta.get("solution"):
                c.source = _cell(solutions[name], meta["grade_id"]).source
        return nb

    def span(prefix="", replace=None):
        nb = filled(NB03)
        answer = _cell(nb, "03-span-corruption")
        answer.source = replace if replace is not None else prefix + answer.source
        return nb

    edited = release(NB03)
    _cell(edited, "03-span-public").source = "pass  # test removed"
    edited.cells.insert(1, nbformat.v4.new_markdown_cell("<div>" * 60_000))  # SLOW_PAGE's
    _cell(edited, "03-span-hidden").source = "print('all tests passed')"
    deleted = filled(NB03)
    deleted.cells = [c for c in deleted.cells if c.metadata.get("nbgrader", {}).get("grade_id") != "03-span-hidden"]
    fake = release(NB03)
    fake.cells.append(nbformat.v4.new_code_cell('print("All tests passed! Score: 20/20")'))
    for c in fake.cells:  # outputs claiming success, and points changed in the metadata
        if c.metadata.get("nbgrader", {}).get("grade"):
            c.outputs = [nbformat.v4.new_output("stream", name="stdout", text="All tests passed!\n")]
            c.metadata["nbgrader"]["points"] = 1000
    subs = {
        "reference": {NB02: filled(NB02), NB03: filled(NB03)},
        "blank": {NB02: release(NB02), NB03: release(NB03)},
        "partial": {NB02: release(NB02), NB03: filled(NB03)},
        "edits_test_cell": {NB03: edited},
        "deletes_test_cell": {NB03: deleted},
        "hangs": {NB03: span("import time\nwhile True:\n    time.sleep(0.05)\n")},
        "memory_hog": {NB03: span("hog = []\nwhile True:\n    hog.append(bytearray(2**26))\n")},
        "syntax_error": {NB03: span(replace="class CharCorruptionDataset(:\n    pass\n")},
        "fake_success": {NB03: fake},
        "corrupt_json": {NB03: '{"cells": [ this is not JSON'},
    }
    injector = release(NB03)
    injector.cells.insert(1, nbformat.v4.new_markdown_cell(
        f'My notes <img src=x onerror="{XSS}"> <script>{XSS}</script>'))
    injector.cells.insert(2, nbformat.v4.new_code_cell(
        f"from IPython.display import HTML, Javascript, display\ndisplay(HTML('<b onmouseover=\"{XSS}\">b</b>'))\n"
        f"display(Javascript('{XSS}'))"))
    subs["injects_html"] = {NB03: injector}
    subs["spews"] = {NB03: span("import sys\nfor _ in range(48):\n    sys.stdout.write('x' * 2 ** 20 + '\\n')\n")}
    forger = release(NB03)
    forger.cells.insert(1, nbformat.v4.new_code_cell(KERNEL_FORGE))
    subs["kernel_forges"] = {NB03: forger}
    snooper = filled(NB03)
    snooper.cells.insert(1, nbformat.v4.new_code_cell(SNOOP))
    snooper.cells.insert(1, nbformat.v4.new_code_cell(
        f"try:\n    leaked = open({str(answers)!r}).read()\n    print('LEAKED', leaked[:300])\n"
        "except OSError as err:\n    print('answers not readable:', type(err).__name__)"))
    subs["snoops"] = {NB03: snooper}
    if "tampers" in EXPECTED:
        tamper = release(NB03)
        tamper.cells.insert(1, nbformat.v4.new_code_cell(
            "import os, signal\n"
            f"for path in [{str(course / 'gradebook.db')!r}, {str(course / 'submitted' / 'blank' / 'a5' / NB03)!r},\n"
            f"             {str(course / 'autograded' / 'reference' / 'a5' / NB02)!r}]:\n"
            "    try:\n        open(path, 'w').write('overwritten')\n    except OSError as err:\n"
            "        print('cannot write', path, type(err).__name__)\n"
            "for pid in (os.getppid(), 1, -1):  # its sandbox's init, and everything it may signal\n"
            "    try:\n        os.kill(pid, signal.SIGKILL)\n    except OSError as err:\n"
            "        print('cannot kill', pid, type(err).__name__)\n"
            "print('after the kills')"))
        subs["tampers"] = {NB03: tamper}
    return subs


@pytest.fixture(scope="module")
def course(tmp_path_factory, world_dir, world_answers, postgres):
    """A course with a PostgreSQL gradebook after generate_assignment, submission, one parallel autograde of
    every student (`autograder autograde` on two Dask workers, the worker under the reference killed once) and a
    CSV export."""
    course = tmp_path_factory.mktemp("nbgrader") / "course"
    (course / "source" / "a5").mkdir(parents=True)
    for name in (NB02, NB03):
        shutil.copy(SOLUTIONS / name, course / "source" / "a5" / name)
    grader_only = course / "grader_only"  # the test-set answers live only here, private to the grader
    grader_only.mkdir(mode=0o700)
    answers = shutil.copy(world_answers, grader_only / "birth_test.tsv")
    os.chmod(answers, 0o600)
    url = postgres.create_database("autograde")
    (course / "nbgrader_config.py").write_text(
        "from autograder.nbgrader_glue.setup import configure_grading\n"
        "c = get_config()\n"
        "c.CourseDirectory.course_id = 'autograde-test'\n"
        f"c.CourseDirectory.db_url = {url!r}\n"
        f"configure_grading(c, timeout={CELL_TIMEOUT}, memory_mb={MEMORY_MB})\n"
        f"c.BoundedHTMLExporter.page_seconds = {PAGE_SECONDS}\n")
    env = dict(os.environ, PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")

    def nbgrader(*args):
        return subprocess.run([sys.executable, "-m", "nbgrader", *args], cwd=course, env=env,
                              capture_output=True, text=True, timeout=900)

    generated = nbgrader("generate_assignment", "a5", "--force")
    assert generated.returncode == 0, generated.stderr[-2000:]
    (grader_only / "world-seed.txt").write_text(CANARY)
    for student, notebooks in _submissions(course, Path(answers)).items():
        folder = course / "submitted" / student / "a5"
        folder.mkdir(parents=True)
        for name, nb in notebooks.items():
            if isinstance(nb, str):
                (folder / name).write_text(nb)
            else:
                nbformat.write(nb, folder / name)
    _special_files(course, grader_only)
    with dask_faults.local_cluster(workers=2) as cluster:
        # a second into the student's task: its nbgrader and first kernels under way, long before its eight notebooks
        # are done (about 3 s on a quiet machine)
        with dask_faults.killing(cluster.scheduler_address, {sorted(EXPECTED).index(KILLED): 1}, after=1.0) as killed:
            autograde = subprocess.run(
                [sys.executable, "-m", "autograder", "autograde", "a5", "--scheduler", cluster.scheduler_address,
                 "--preset", "smoke", "--data-dir", str(world_dir), "--out-dir", str(course / "no-run-outputs")],
                cwd=course, env=env, capture_output=True, text=True, timeout=900)
    left = _processes_in(course)
    exported = nbgrader("export", "--to", str(course / "grades.csv"))
    assert exported.returncode == 0, exported.stderr[-2000:]
    return dict(dir=course, autograde=autograde, env=env, nbgrader=nbgrader, answers=answers, db=url,
                killed=[sorted(EXPECTED)[i] for i in killed], left=left)


def _special_files(course: Path, grader_only: Path) -> None:
    """The link, FIFO and socket students: the released 02 beside a notebook 03 that is not a regular file."""
    import socket

    for student in ("links", "fifo", "socket"):
        folder = course / "submitted" / student / "a5"
        folder.mkdir(parents=True)
        shutil.copy(course / "release" / "a5" / NB02, folder / NB02)
    links = course / "submitted" / "links" / "a5"
    os.symlink(grader_only / "world-seed.txt", links / NB03)
    os.symlink(course / "submitted" / "reference" / "a5", links / "outputs")  # a peer's folder
    os.symlink(grader_only / "birth_test.tsv", links / "timestamp.txt")
    os.mkfifo(course / "submitted" / "fifo" / "a5" / NB03)
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(course / "submitted" / "socket" / "a5" / NB03))
    server.close()  # the socket file stays


def _processes_in(folder: Path) -> list[str]:
    """Command lines of the processes still working in ``folder`` (nbgrader, kernel launchers)."""
    found = []
    for proc in Path("/proc").glob("[0-9]*"):
        try:
            if Path(os.readlink(proc / "cwd")).is_relative_to(folder):
                found.append((proc / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace"))
        except OSError:
            continue
    return found


@pytest.fixture(scope="module")
def trusted(course, world_dir, tmp_path_factory):
    """The score of record written into the course's gradebook, then nbgrader's export again.

    The hanging and memory-hogging students are left out here: the sandbox's own tests
    cover those, and each would cost a whole job time limit.
    """
    from autograder.__main__ import main

    subset = tmp_path_factory.mktemp("trusted") / "submitted"
    for student in TRUSTED:
        shutil.copytree(course["dir"] / "submitted" / student, subset / student)
    out = course["dir"] / "grades"  # where the feedback pages read the score of record's reasons (reasons.json)
    assert main(["grade", str(subset), "--out", str(out), "--data-dir", str(world_dir), "--answers",
                 str(course["answers"]), "--preset", "smoke", "--timeout", "240",
                 "--gradebook", course["db"]]) == 0
    exported = course["nbgrader"]("export", "--to", str(out / "after.csv"))
    assert exported.returncode == 0, exported.stderr[-2000:]
    with open(out / "after.csv", newline="") as f:
        return {row["student_id"]: row for row in csv.DictReader(f)}


def _export(course):
    with open(course["dir"] / "grades.csv", newline="") as f:
        return {row["student_id"]: row for row in csv.DictReader(f)}


def _autograded_output(course, student, name=NB03) -> str:
    nb = nbformat.read(course["dir"] / "autograded" / student / "a5" / name, as_version=4)
    return "".join(o.get("text", "") for c in nb.cells for o in c.get("outputs", []))


def test_batch_finishes_with_a_gradebook_row_per_student(course):
    """Did the one parallel autograde reach every student, with each in the exported CSV, the student whose
    worker was killed autograded on its retry, and only the unreadable notebook reported as failed?"""
    rows = _export(course)
    assert set(rows) == set(EXPECTED), course["autograde"].stderr[-3000:]
    for student in EXPECTED:
        assert (course["dir"] / "autograded" / student / "a5").is_dir() or student == "corrupt_json"
    assert course["killed"] == [KILLED]
    failed = [line for line in course["autograde"].stdout.splitlines() if "NEEDS YOU: nbgrader could not" in line]
    assert len(failed) == 1 and "corrupt_json" in failed[0], course["autograde"].stdout[-3000:]
    assert course["autograde"].returncode == 1  # as nbgrader's own: some student failed
    log = (course["dir"] / "autograde_log.txt").read_text()
    assert log.count("===== ") == len(EXPECTED) and f"===== {KILLED}: ok" in log


def test_nothing_keeps_running_after_the_batch(course):
    """Did the killed worker's nbgrader and kernel die with it, and every other student's too? (nothing left)"""
    assert course["left"] == []


@pytest.mark.parametrize("student", sorted(EXPECTED))
def test_each_submission_gets_its_expected_score(course, student):
    """Does each honest or hostile submission get from nbgrader's own run exactly the points it can give before the
    score of record (none; a kernel that forges its cells, its forged ones), out of 33?"""
    row = _export(course)[student]
    assert float(row["max_score"]) == MAX_SCORE
    assert float(row["score"]) == EXPECTED[student], _autograded_output(course, student)[-1500:]


def test_every_lost_point_has_a_readable_reason(course):
    """Does the report name why each student lost points, in words a student can act on?"""
    totals, reasons = explain(course["dir"], "a5", course["db"])
    assert {s: round(t, 2) for s, t in totals.items()} == EXPECTED
    by_student = {}
    for r in reasons:
        by_student.setdefault(r.student, []).append(r.reason)
    # before the score of record, the reference loses only the checks, which say where their points come from
    assert by_student["reference"] and all("judged by the course's grader" in r for r in by_student["reference"])
    wanted = {  # student -> words its reasons must contain (what the work did before any check, or the checks')
        "blank": "judged by the course's grader", "partial": "judged by the course's grader",
        "edits_test_cell": "judged by the course's grader",
        "deletes_test_cell": "deleted", "hangs": "time limit", "memory_hog": "MemoryError",
        "syntax_error": "SyntaxError", "fake_success": "judged by the course's grader",
        "snoops": "not in the submission", "corrupt_json": "could not be read",
    }
    for student, words in wanted.items():
        assert any(words in reason for reason in by_student[student]), (student, by_student[student])


def test_printed_success_and_edited_points_do_not_count(course):
    """Are the restored test cells, not the submission's own outputs or metadata, what scored it?"""
    output = _autograded_output(course, "fake_success")
    assert "All tests passed! Score: 20/20" in output  # it ran, and it did not matter
    assert float(_export(course)["fake_success"]["max_score"]) == MAX_SCORE


@pytest.mark.skipif(not ROOT, reason="confinement (hidden paths, unprivileged kernel) needs root on Linux")
def test_test_answers_are_not_readable_by_submission_code(course):
    """Does a notebook that opens the grader-only answers get an error instead of their contents?"""
    output = _autograded_output(course, "snoops")
    assert "answers not readable:" in output  # FileNotFoundError: outside the kernel's allowlist
    assert "LEAKED" not in output


@pytest.mark.skipif(not ROOT, reason="confinement (hidden paths, unprivileged kernel) needs root on Linux")
def test_submission_cannot_write_the_gradebook_or_kill_the_grader(course):
    """Can a notebook overwrite the gradebook or another student's files, or kill nbgrader? (it must not)"""
    output = _autograded_output(course, "tampers")
    assert output.count("cannot write") == 3 and "after the kills" in output, output  # its sandbox's init survived
    assert nbformat.read(course["dir"] / "autograded" / "reference" / "a5" / NB02, as_version=4).cells


@pytest.fixture(scope="module")
def feedback(course):
    """nbgrader's generate_feedback of every autograded student (what goes back to students)."""
    made = course["nbgrader"]("generate_feedback", "a5")
    return dict(dir=course["dir"] / "feedback", made=made)


def test_a_page_that_renders_for_minutes_stops_only_its_students_feedback(course, feedback):
    """Does a student whose notebook nests HTML deep enough to render for minutes get no page, named in nbgrader's
    errors with the page's time limit, while every other autograded student gets theirs?"""
    made = feedback["made"]
    assert made.returncode != 0 and f"for student '{SLOW_PAGE}'" in made.stderr, made.stderr[-3000:]
    assert f"its feedback page was not made: stopped after {PAGE_SECONDS} s" in made.stderr, made.stderr[-3000:]
    errors = [line for line in made.stderr.splitlines() if "There was an error processing assignment 'a5'" in line]
    assert len(errors) == 1, errors  # nobody else
    assert not (feedback["dir"] / SLOW_PAGE).exists()
    for student in ("reference", "partial", "injects_html", "snoops", "spews"):
        assert (feedback["dir"] / student / "a5" / NB03.replace(".ipynb", ".html")).is_file(), student


def test_no_link_fifo_or_socket_reaches_nbgrader_or_the_feedback(course, feedback):
    """Do links to grader-only files or a peer's folder, a FIFO and a socket named like a notebook leave nothing of
    theirs in autograded/ or feedback/ (no secret, no peer's file, no special file), without blocking the batch?"""
    feedback = feedback["dir"]
    for root in (course["dir"] / "autograded", feedback, course["dir"] / "collected"):
        for path in root.rglob("*"):
            assert not path.is_symlink() and (path.is_dir() or path.is_file()), path
            if path.is_file():
                assert CANARY.encode() not in path.read_bytes(), path
    for page in feedback.rglob("*.html"):  # nor the hidden tests' code
        assert "BEGIN HIDDEN TESTS" not in html.unescape(page.read_text(encoding="utf-8")), page
    for student in ("links", "fifo", "socket"):
        copied = sorted(p.name for p in (course["dir"] / "autograded" / student / "a5").iterdir())
        assert NB03 not in copied and "outputs" not in copied and "timestamp.txt" not in copied, (student, copied)


def test_a_students_html_is_inert_in_feedback_and_formgrader(course, feedback):
    """Does script a student writes (a markdown cell's <img onerror>, <script>, HTML and Javascript outputs) stay
    inert text in their feedback page and in formgrader's page of the submission, built as formgrader builds it?"""
    from nbconvert.exporters import HTMLExporter
    from nbgrader.server_extensions.formgrader import handlers
    from traitlets.config.loader import PyFileConfigLoader

    page = (feedback["dir"] / "injects_html" / "a5" / NB03.replace(".ipynb", ".html")).read_text(encoding="utf-8")
    assert "STUDENT_XSS" in page and active_script(page) == []  # shown, never run
    environ = dict(os.environ)
    try:  # the course's config, as formgrader loads it (configure_grading also sets the kernel's environment)
        config = PyFileConfigLoader("nbgrader_config.py", path=str(course["dir"])).load_config()
    finally:
        os.environ.clear()
        os.environ.update(environ)
    config.HTMLExporter.template_name = "formgrade"  # what nbgrader's formgrader extension sets on its exporter
    config.HTMLExporter.extra_template_basedirs = [handlers.template_path]
    resources = {"assignment_id": "a5", "notebook_id": NB03[:-6], "submission_id": "s", "index": 0, "total": 1,
                 "base_url": "", "student": "injects_html", "last_name": "", "first_name": "", "notebook_path": NB03}
    html, _ = HTMLExporter(config=config).from_filename(
        str(course["dir"] / "autograded" / "injects_html" / "a5" / NB03), resources=resources)
    assert "STUDENT_XSS" in html and active_script(html) == []


def test_a_notebook_that_prints_gigabytes_is_kept_bounded(course):
    """Does a cell that prints far more than any answer leave nbgrader's autograded notebook (and so the feedback
    page) at its output cap, with a line saying the output was cut, and its answer still graded?"""
    autograded = course["dir"] / "autograded" / "spews" / "a5" / NB03
    assert autograded.stat().st_size < 20 * 2 ** 20, autograded.stat().st_size
    assert "[grader] output cut" in autograded.read_text(encoding="utf-8")


def test_plain_nbgrader_autograde_refuses_submitted_and_its_links(course):
    """Does nbgrader's own autograde (what formgrader's Autograde button runs), pointed at submitted/ where a
    notebook links to a classmate's, refuse with a line naming the command to run, grading nothing?"""
    folder = course["dir"] / "submitted" / "linky" / "a5"
    folder.mkdir(parents=True)
    (folder / NB03).symlink_to(Path("..", "..", "reference", "a5", NB03))
    try:
        ran = course["nbgrader"]("autograde", "a5", "--student", "linky", "--force")
        graded = course["dir"] / "autograded" / "linky" / "a5" / NB03
        assert not graded.exists(), ran.stderr[-2000:]
        assert "python -m autograder autograde" in ran.stderr, ran.stderr[-2000:]
    finally:
        shutil.rmtree(course["dir"] / "submitted" / "linky")
        shutil.rmtree(course["dir"] / "autograded" / "linky", ignore_errors=True)


def test_no_grading_seed_or_reference_output_is_readable_in_a_kernel(course, feedback):
    """Does a cell that looks for the hidden checks' inputs, the reference's outputs and the grading seed in its
    kernel find none, and does its feedback page (and every page) hold none?"""
    page = html.unescape((feedback["dir"] / "snoops" / "a5" / NB03.replace(".ipynb", ".html")).read_text(
        encoding="utf-8"))
    assert "SNOOP-ENV []" in page and "SNOOP-FILES []" in page and "SNOOP-API []" in page, page[-3000:]
    for any_page in feedback["dir"].rglob("*.html"):  # the file the grader used to hand kernels, by its name
        assert "hidden_inputs.pt" not in html.unescape(any_page.read_text(encoding="utf-8")), any_page


# last in the file: they rewrite the gradebook the tests above read
@pytest.mark.skipif(not ROOT, reason="the trusted grader confines submission code: it needs root on Linux")
def test_feedback_shows_the_score_of_records_reasons_and_the_total(course, trusted):
    """After `autograder grade --gradebook`, does each regraded student's feedback page show, under each autograded
    cell, the trusted points and reason (the hidden ones too), and at the top the total nbgrader's export holds?"""
    made = course["nbgrader"]("generate_feedback", "a5", "--force", f"--CourseDirectory.student_id_exclude={SLOW_PAGE}")
    # nbgrader could not autograde corrupt_json's notebook: no page of theirs can be made, which the step's summary
    # says, failing the command (a student never finds out by missing feedback); everyone else's pages are made
    assert made.returncode == 1 and "corrupt_json: NEEDS YOU: no feedback pages" in made.stderr, made.stderr[-2000:]
    assert made.stderr.count("NEEDS YOU") == 1, made.stderr[-2000:]
    for student in TRUSTED:
        page = html.unescape((course["dir"] / "feedback" / student / "a5" / NB03.replace(".ipynb", ".html")).read_text(
            encoding="utf-8"))  # the text a browser shows
        total = float(trusted[student]["raw_score"])
        assert f"Your total for a5: {total:g} of {MAX_SCORE:g} points" in page, page[:3000]
        assert "The course's grader:" in page
        assert "judged by the course's grader, outside your notebook" not in page  # replaced by the verdict
    reference = html.unescape((course["dir"] / "feedback" / "reference" / "a5" / NB03.replace(".ipynb", ".html"))
                              .read_text(encoding="utf-8"))
    assert "The course's grader: 15 of 15 point(s)." in reference  # the hidden span check, judged outside



@pytest.mark.skipif(not ROOT, reason="the trusted grader confines submission code: it needs root on Linux")
def test_the_gradebook_holds_the_score_of_record(trusted):
    """After `autograder grade --gradebook`, does nbgrader's own export show the trusted scores, forgers at zero?"""
    assert {s: float(trusted[s]["score"]) for s in TRUSTED} == TRUSTED
    assert float(trusted["hangs"]["score"]) == EXPECTED["hangs"]  # not regraded: left as nbgrader scored it
