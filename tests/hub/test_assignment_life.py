"""The life of an assignment on the course's JupyterHub, as three real Linux users in headless Chromium.

One module, its tests in order (each a step; a failed step skips the rest), sharing one hub, one browser and three
logged-in users (module fixtures, so the hub starts once and each server spawns once): the instructor releases from
formgrader; each student's server runs from the users' tree, and the student can read nothing of the checkout or the
instructor's course folder; two students fetch, answer one cell each, Validate and submit from the Assignments tab;
three hostile students write into the exchange from their own shells (eve in ada's name, mal a folder she made
unreadable, sy a hand-made submission without nbgrader's secret); the instructor collects (the genuine submissions,
each refusal named), runs docs/hub.md's grading commands (as root, --preset smoke), grades a written answer by hand
in formgrader and releases feedback (all but sy's); each student fetches feedback and reads their own, and only their
own, with the grader's reasons for the run points lost and their total; the instructor's terminal and root export
the totals.

Beside them, the shapes a term brings (issue 50): a due date two hours past when the students submit, so ada's work is
late and loses the course's penalty (10% a started day, set before the servers start: tests/hub/conftest.py) while bo
has an extension; ada hands in again after the first collect, and the docs' `nbgrader collect --update` takes it; five
students of their own shell hand in the same work as ada's first in the shapes of tests/hub/shapes.py (a Windows
editor's save, a renamed copy, a deleted notebook, a slow exploration, a %%writefile helper: these join when issue 50's
items 1-3 are in the checkout); and three students' work comes through a Canvas download (`python -m autograder lms`,
one marked LATE, whose time the instructor then writes as the summary asks). Each ends with the right total in the
export and on their own feedback page, and the steps' closing summaries name each special case.
"""
from __future__ import annotations

import csv
import datetime
import html
import os
import pwd
import re
import secrets
import shlex
import shutil
import subprocess
import tempfile
import textwrap
from pathlib import Path

import nbformat
import pytest

from autograder.checks import registry, run_files
from course_lib.layout import REPO, SOLUTIONS_DIR

from . import hub_server, shapes, ui
from .conftest import COURSE_NOTEBOOKS
from .hub_server import HOSTILE, INSTRUCTOR, STUDENTS

# (the grading commands now grade 13 students, one with two 35 s explorations, on 2 busy cores)
pytestmark = [pytest.mark.timeout(1500), pytest.mark.usefixtures("step")]

A5 = "a5"
ADA, BO = STUDENTS
EVE, MAL, SY = HOSTILE
FUTURE = "2099-01-01 00:00:00.000000 UTC"  # eve's forged time: it would win every collect
# each student answers one cell: ada the span corruption (hidden checks at grading), bo the first numeric twin of 07
ANSWERS = {ADA: ("03_span_corruption.ipynb", "03-span-corruption"), BO: ("07_attention_exploration.ipynb", "07-a-code")}
# the written answer the instructor grades by hand, and what each student gets for it
WRITTEN_NOTEBOOK, WRITTEN = "06_considerations_in_pretrained_knowledge", "06-a"
MANUAL = {ADA: (1.5, f"Clear, {ADA}: name the pretraining data's role"), BO: (0.5, f"Too short, {BO}: say why")}
GRADING_PRESET = "smoke"  # the hub's COURSE_PRESET in these tests (hub_server.start_hub): students and grader agree
# the due date, set after the release: two hours before the browser's students submit (so ada is late by less than a
# day), after the shape students' hand-ins (their own times: an hour before it)
DUE = datetime.datetime.now(datetime.timezone.utc).replace(tzinfo=None, microsecond=0) - datetime.timedelta(hours=2)
PENALTY = 0.10  # tests/hub/conftest.py's policy: 10% of the points earned per started day late
EXTENDED = BO  # given an extension of two days: handed in after the due date, on time for them
RESUBMITTED = (ADA, "07_attention_exploration.ipynb", "07-a-code")  # ada hands in again, with 07's first twin too
SHAPED = tuple(shapes.SHAPES) if shapes.EDITOR_SHAPES_READY else ()  # (issue 50 items 1-3: tests/hub/shapes.py)
CANVAS = tuple(shapes.CANVAS)
SPAN_CELLS = [c.grade_id for c in registry.CHECKS if c.notebook == "03_span_corruption"]  # the shapes' same work


def solution_source(notebook: str, grade_id: str) -> str:
    """The instructor's code of one answer cell, without nbgrader's BEGIN/END SOLUTION lines."""
    cell = _cell(nbformat.read(SOLUTIONS_DIR / notebook, as_version=4), grade_id)
    return "\n".join(line for line in cell.source.splitlines() if not re.match(r"\s*### (BEGIN|END) SOLUTION", line))


def _cell(nb, grade_id: str):
    return next(c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") == grade_id)


def _server(hub, user: str) -> str:
    return f"{hub.url}/user/{user}"


def _as_root(command: str) -> subprocess.CompletedProcess:
    """``command`` in bash, as the instructor's root shell would run it (none of the test run's own settings)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("COURSE_", "PYTEST_", "NBGRADER", "JUPYTER"))}
    return subprocess.run(["bash", "-euo", "pipefail", "-c", command], cwd=REPO, env=env, capture_output=True,
                          text=True, timeout=1400)


def _as_user(user: str, *command: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    """``command`` as ``user`` (their uid, gid and groups), as their own shell on the hub would run it."""
    return subprocess.run(["setpriv", f"--reuid={user}", f"--regid={user}", "--init-groups", "--", *command],
                          cwd="/", env=env, capture_output=True, text=True, timeout=300)


def _servers_of(user: str) -> list[tuple[list[str], dict[str, str], int]]:
    """(command line, environment, pid) of each of ``user``'s processes that is their Jupyter server."""
    uid, found = pwd.getpwnam(user).pw_uid, []
    for entry in Path("/proc").iterdir():
        try:
            if not entry.name.isdigit() or entry.stat().st_uid != uid:
                continue
            argv = (entry / "cmdline").read_bytes().decode().split("\0")
            if "jupyterhub.singleuser" in argv:
                environ = (entry / "environ").read_bytes().decode().split("\0")
                found.append((argv, dict(v.split("=", 1) for v in environ if "=" in v), int(entry.name)))
        except OSError:  # gone meanwhile
            continue
    return found


def test_instructor_generates_and_releases_from_formgrader(hub, people):
    """Does the instructor's formgrader generate the student version and release it into the hub's exchange?"""
    page = people[INSTRUCTOR]
    ui.formgrader(page, _server(hub, INSTRUCTOR))
    log = ui.assignment_action(page, A5, "assign")
    assert "Successfully created the student version" in log
    ui.assignment_action(page, A5, "release")
    released = hub.exchange / "attention-course" / "outbound" / A5
    assert sorted(p.name for p in released.glob("*.ipynb")) == sorted(COURSE_NOTEBOOKS)
    assert "### BEGIN SOLUTION" not in (released / ANSWERS[ADA][0]).read_text()


def test_instructor_sets_the_due_date_and_an_extension(hub, people):
    """In the instructor's terminal, as docs/hub.md step 1 says: does `nbgrader db assignment add --duedate` set the
    due date (two hours before the students submit) and `python -m autograder extend` give bo two more days, saying
    bo's own due date?"""
    due = f"{DUE:%Y-%m-%d %H:%M:%S} UTC"
    done = _in_the_instructors_terminal(f'cd ~/attention-course && nbgrader db assignment add {A5} --duedate="{due}" '
                                        f"&& python -m autograder extend {A5} {EXTENDED} --days 2")
    assert done.returncode == 0, done.stderr[-2000:]
    own = DUE + datetime.timedelta(days=2)
    assert f"{EXTENDED}: due {own:%Y-%m-%d %H:%M} UTC" in done.stdout, done.stdout
    with _gradebook() as gb:
        assert gb.find_assignment(A5).duedate == DUE


@pytest.mark.parametrize("student", STUDENTS)
def test_student_sees_the_student_tools_only(hub, people, student):
    """Does a student's server offer the student kernel only, answer 404 for formgrader, and show only the
    Assignment List in the Nbgrader menu?"""
    page = people[student]
    specs = page.request.get(f"{_server(hub, student)}/api/kernelspecs").json()
    assert list(specs["kernelspecs"]) == ["python3"]
    assert page.request.get(f"{_server(hub, student)}/formgrader").status == 404
    labels = page.locator(".lm-MenuBar-itemLabel", has_text="Nbgrader")
    labels.click()
    items = page.locator(".lm-Menu-content .lm-Menu-itemLabel").all_inner_texts()
    page.keyboard.press("Escape")
    assert [i for i in items if i.strip()] == ["Assignment List"]


@pytest.mark.parametrize("student", STUDENTS)
def test_student_reads_nothing_of_the_checkout_or_the_instructors_folder(hub, people, student):
    """Does a student's server run the course from the users' tree, and can the student read no file of the
    checkout's solutions/, tests/ or .git (the checkout the hub's Python used to link into), nor of the instructor's
    course folder?"""
    tree = hub_server.machine.users_tree(REPO)
    servers = _servers_of(student)
    assert servers and all(argv[0] == str(tree / "python" / "bin" / "python") for argv, _, _ in servers), servers
    git = REPO / ".git"  # a worktree's .git is a file naming the repository's
    course = hub_server.course_folder()
    for path in (REPO / "solutions" / "a5" / ANSWERS[ADA][0], REPO / "tests" / "conftest.py",
                 git if git.is_file() else git / "HEAD", course / "solutions" / "a5" / ANSWERS[ADA][0],
                 course / "grader_only" / "birth_test.tsv"):
        assert path.is_file(), path
        read = _as_user(student, "/bin/cat", str(path))
        assert read.returncode != 0 and "Permission denied" in read.stderr, (path, read.stdout[:200])
    # what a student finds from the hub's Python: the interpreter, its packages and the course's code, all in the tree
    found = _as_user(student, str(tree / "python" / "bin" / "python"), "-c",
                     "import os, sys, course_lib; print(os.path.realpath(sys.executable), course_lib.__file__)")
    assert found.returncode == 0 and all(p.startswith(f"{tree}/") for p in found.stdout.split()), found


@pytest.mark.parametrize("student", STUDENTS)
def test_student_server_runs_in_its_own_share_of_the_machine(hub, people, student):
    """Does each student's server (not the instructor's) run in a cgroup of its own, capped at the hub's CPU and memory
    share (2 CPUs, 4G by default), told so in CPU_LIMIT and MEM_LIMIT, so that the course's training threads read
    that share?"""
    from course_lib.gpt.cpu_share import cgroup_quota

    servers = _servers_of(student)
    assert servers
    for _, environ, pid in servers:
        groups = Path(f"/proc/{pid}/cgroup").read_text()
        assert "/course-grader/job-" in groups, groups
        assert cgroup_quota(Path(f"/proc/{pid}/cgroup")) == 2.0
        assert float(environ["CPU_LIMIT"]) == 2.0 and int(environ["MEM_LIMIT"]) == 4 * 2 ** 30
    assert all("/course-grader/" not in Path(f"/proc/{pid}/cgroup").read_text()
               for _, _, pid in _servers_of(INSTRUCTOR))


@pytest.mark.parametrize("student", STUDENTS)
def test_student_fetches_answers_validates_and_submits(hub, people, student):
    """Can a student fetch the release, answer a cell, Validate it and submit, all from the Assignments tab?"""
    page = people[student]
    notebook, grade_id = ANSWERS[student]
    ui.open_assignments(page)
    ui.fetch(page, A5)
    fetched = hub_server.home(student) / A5 / notebook
    assert fetched.is_file() and fetched.owner() == student  # fetched by their own server, as them

    nb = nbformat.read(fetched, as_version=4)
    index = nb.cells.index(_cell(nb, grade_id))
    ui.open_notebook(page, f"{A5}/{notebook}")
    ui.replace_cell_source(page, index, solution_source(notebook, grade_id))
    passed, said = ui.validate(page)
    # the answer's own check passes; a notebook with other answers still blank lists those (07), or passes (03)
    own_check = next(c for c in nb.cells[index + 1:] if c.metadata.get("nbgrader", {}).get("grade")).source
    assert own_check not in said, said[-2000:]
    assert passed or "The following cell failed" in said, said[-2000:]
    ui.save(page)  # as a student would before submitting (Validate saved, but the page may have changed since)
    assert solution_source(notebook, grade_id) in _cell(nbformat.read(fetched, as_version=4), grade_id).source

    ui.open_assignments(page)
    ui.submit(page, A5)
    inbound = hub.exchange / "attention-course" / "inbound"
    submitted = [p for p in inbound.iterdir() if p.name.startswith(f"{student}+{A5}+")]
    assert len(submitted) == 1, [p.name for p in inbound.iterdir()]
    held = nbformat.read(submitted[0] / notebook, as_version=4)
    assert solution_source(notebook, grade_id) in _cell(held, grade_id).source


def _hand_made(hub, user: str, claimed: str, when: str, secret: bool = True, unreadable: str | None = None) -> None:
    """A submission ``user`` makes by hand in the exchange's inbound/ from their own shell: named for ``claimed`` at
    ``when``, the released notebooks (a marker of theirs in each) and outputs/, with or without nbgrader's secret,
    ``unreadable`` a folder of it chmod 0444 (which only its owner can do)."""
    folder = shlex.quote(str(hub.exchange / "attention-course" / "inbound" / f"{claimed}+{A5}+{when}+{user[-3:]}"))
    released = shlex.quote(str(hub.exchange / "attention-course" / "outbound" / A5))
    lines = ["set -e", f"mkdir -p {folder}/outputs",
             f'for nb in {released}/*.ipynb; do sed "s/Span corruption/Span corruption, by {user}/" "$nb" '
             f'> {folder}/"$(basename "$nb")"; done',
             f"echo {user} > {folder}/outputs/vanilla.nopretrain.dev.predictions",
             f"printf %s {shlex.quote(when)} > {folder}/timestamp.txt"]
    if secret:
        lines.append(f"printf %s {'ab' * 64} > {folder}/submission_secret.txt")
    if unreadable:
        lines.append(f"chmod 0444 {folder}/{unreadable}")
    done = _as_user(user, "bash", "-c", "\n".join(lines))
    assert done.returncode == 0, done.stderr


def test_hostile_students_write_into_the_exchange(hub):
    """Can eve leave a submission named for ada with a far-future time, mal one of her own with a folder she made
    unreadable, and sy a hand-made one without nbgrader's secret, each from their own shell, as any student can?"""
    now = datetime.datetime.now(datetime.timezone.utc) - datetime.timedelta(seconds=30)
    recent = now.strftime("%Y-%m-%d %H:%M:%S.%f UTC")
    _hand_made(hub, EVE, ADA, FUTURE)
    _hand_made(hub, MAL, MAL, recent, unreadable="outputs")
    _hand_made(hub, SY, SY, recent, secret=False)
    owners = {p.owner() for p in (hub.exchange / "attention-course" / "inbound").iterdir()}
    assert {EVE, MAL, SY, ADA, BO} <= owners


def test_students_of_every_shape_hand_in_from_their_shells(hub):
    """Can each shape student leave a genuine submission (their own folder, nbgrader's names, times and secret) of the
    same work as ada's first, in their shape (tests/hub/shapes.py), an hour before the due date?"""
    if not SHAPED:
        pytest.skip(shapes.NEEDS_ITEMS_1_3)
    released = hub.exchange / "attention-course" / "outbound" / A5
    when = f"{DUE - datetime.timedelta(hours=1):%Y-%m-%d %H:%M:%S.%f} UTC"
    staging = Path(tempfile.mkdtemp(prefix="hubtest-shapes-"))
    staging.chmod(0o755)
    try:
        for user in SHAPED:
            (staging / user).mkdir(mode=0o755)
            for name, data in shapes.hand_in(user, released).items():
                (staging / user / name).write_bytes(data)
                (staging / user / name).chmod(0o644)
            folder = shlex.quote(str(hub.exchange / "attention-course" / "inbound" / f"{user}+{A5}+{when}+{user[-3:]}"))
            done = _as_user(user, "bash", "-c", "\n".join([
                "set -e", f"mkdir {folder}", f"cp -r {shlex.quote(str(staging / user))}/. {folder}/",
                f"printf %s {shlex.quote(when)} > {folder}/timestamp.txt",
                f"printf %s {secrets.token_hex(64)} > {folder}/submission_secret.txt"]))  # each its own, as submit
            assert done.returncode == 0, (user, done.stderr)
    finally:
        shutil.rmtree(staging)


def test_instructor_collects_from_formgrader(hub, people):
    """Does formgrader's Collect bring each genuine submission into the course folder's submitted/ as its owner's,
    and refuse, as an error naming owner and claimed student, eve's folder in ada's name and mal's unreadable one,
    listing both in collect_refused.csv, while sy's hand-made one is collected?"""
    page = people[INSTRUCTOR]
    ui.formgrader(page, _server(hub, INSTRUCTOR))
    log = ui.assignment_action(page, A5, "collect", expect_error=True)
    assert "refused 2 inbound entries" in log, log[-3000:]
    assert f"claims {ADA}, owned by {EVE}" in log, log[-3000:]
    for student, (notebook, grade_id) in ANSWERS.items():
        collected = hub_server.course_folder() / "submitted" / student / A5 / notebook
        assert collected.is_file(), f"{student}'s submission was not collected"
        source = _cell(nbformat.read(collected, as_version=4), grade_id).source
        assert solution_source(notebook, grade_id) in source and EVE not in collected.read_text()
    submitted = hub_server.course_folder() / "submitted"
    assert (submitted / SY / A5 / "03_span_corruption.ipynb").is_file() and not (submitted / MAL).exists()
    assert all((submitted / user / A5).is_dir() for user in SHAPED)
    with open(hub_server.course_folder() / "collect_refused.csv", newline="") as f:
        refused = {(r["claimed_student"], r["owner"]): r["why"] for r in csv.DictReader(f)}
    assert set(refused) == {(ADA, EVE), (MAL, MAL)}, refused
    assert "PermissionError" in refused[(MAL, MAL)] and f"owned by {EVE}" in refused[(ADA, EVE)]
    listing = _in_the_instructors_terminal(f"cd ~/attention-course && python -m autograder inbound {A5}")
    assert listing.returncode == 0 and f"claims {ADA}, owned by {EVE}" in listing.stdout, listing.stderr[-2000:]


def test_a_canvas_download_lands_in_submitted(hub):
    """Does docs/grading.md's LMS intake, as root in the course folder, put three Canvas students' work (loose and
    zipped) into submitted/, its summary naming the one Canvas marked late with no time (needing the instructor); and
    once the instructor writes that student's time as the summary asks, is the folder still all the instructor's?"""
    released = hub.exchange / "attention-course" / "outbound" / A5
    download = Path(tempfile.mkdtemp(prefix="hubtest-canvas-")) / "submissions.zip"
    download.write_bytes(shapes.canvas_download(released))
    course = hub_server.course_folder()
    try:
        done = _as_root(f"cd {shlex.quote(str(course))} && .venv/bin/python -m autograder lms {A5} "
                        f"{shlex.quote(str(download))} --from canvas")
    finally:
        shutil.rmtree(download.parent)
    assert done.returncode == 1, done.stderr[-2000:]  # the late mark without a time needs the instructor
    assert "canvaslate: NEEDS YOU: canvas marked it late; its download gives no time" in done.stdout, done.stdout
    for student in CANVAS:
        assert (course / "submitted" / student / A5 / "03_span_corruption.ipynb").is_file(), student
    late = course / "submitted" / "canvaslate" / A5 / "timestamp.txt"  # the time Canvas shows for it
    late.write_text(f"{DUE + datetime.timedelta(hours=1):%Y-%m-%d %H:%M:%S.%f} UTC", encoding="utf-8")
    owner = pwd.getpwnam(INSTRUCTOR)
    os.chown(late, owner.pw_uid, owner.pw_gid)


def _docs_block(command: str) -> str:
    """The ```bash block of docs/hub.md that runs ``command``, for the test's own course folder: the page's
    `cd ~instructor/attention-course` goes to the test instructor's, and the page's preset to the one the test's
    students train with (smoke), with a time limit."""
    text = (REPO / "docs" / "hub.md").read_text(encoding="utf-8")
    block = next(b for b in re.findall(r"^ *```bash\n(.*?)^ *```$", text, flags=re.S | re.M) if command in b)
    block = textwrap.dedent(block)
    assert block.startswith("cd ~instructor/attention-course\n"), block
    block = block.replace("cd ~instructor/attention-course", f"cd {hub_server.course_folder()}", 1)
    return block.replace("--preset cpu", f"--preset {GRADING_PRESET} --timeout 240")


def _grade() -> tuple[dict[str, dict[str, str]], str]:
    """Run docs/hub.md's grading commands as root; return grades/grades.csv's rows by student, and what they
    printed."""
    done = _as_root(_docs_block("autograder autograde"))
    assert done.returncode == 0, f"{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    with open(hub_server.course_folder() / "grades" / "grades.csv", newline="") as f:
        return {r["student_id"]: r for r in csv.DictReader(f)}, done.stdout + done.stderr


def test_grading_commands_run_on_the_collected_submissions(hub):
    """Do docs/hub.md's grading commands, run as root in the instructor's course folder, grade each student's own
    answer (ada the span points, bo the twin's, neither the other's), with no checksum warning for these honest
    students, and leave every file of the course folder the instructor's?"""
    rows, said = _grade()
    # eve's forgery and mal's unreadable folder were never collected
    assert set(rows) == {*STUDENTS, SY, *SHAPED, *CANVAS}
    assert float(rows[ADA]["03-span-hidden"]) > 0 == float(rows[BO]["03-span-hidden"])
    assert float(rows[BO]["07-a-test"]) > 0 == float(rows[ADA]["07-a-test"])
    # the same work in every shape earns the same points of record
    for student in (*SHAPED, *CANVAS):
        assert [rows[student][c] for c in SPAN_CELLS] == [rows[ADA][c] for c in SPAN_CELLS], student
    # the summaries name each special case: the late work, the extension, the shapes the collect step noted
    for line in (f"  {ADA}: late by", f"  {EXTENDED}: handed in", "within their extension: no penalty",
                 "  canvaslate: late by", *(f"  {u}:" for u in SHAPED if u in ("hubtest-win", "hubtest-ren",
                                                                                "hubtest-del"))):
        assert line in said, (line, said[-3000:])
    course = hub_server.course_folder()
    # nbgrader's "Attribute 'checksum' for cell ... has changed!": neither honest student changed a locked cell (sy's
    # hand-made notebooks did: nbgrader says so for her alone)
    log = (course / "autograde_log.txt").read_text(encoding="utf-8")
    sections = {part.split(":", 1)[0]: part for part in log.split("\n===== ")[1:]}
    assert all("has changed" not in sections[student] for student in STUDENTS), log[-3000:]
    assert "has changed" in sections[SY]
    roots = [str(p.relative_to(course)) for p in course.rglob("*") if p.lstat().st_uid == 0]
    assert not roots, roots[:20]


def _instructors_block(command: str) -> str:
    """The ```bash block of docs/hub.md that the instructor runs in their own terminal (`cd ~/attention-course`)."""
    text = (REPO / "docs" / "hub.md").read_text(encoding="utf-8")
    block = next(b for b in re.findall(r"^ *```bash\n(.*?)^ *```$", text, flags=re.S | re.M) if command in b)
    block = textwrap.dedent(block)
    assert block.startswith("cd ~/attention-course\n"), block
    return block


def test_a_resubmission_after_the_collect_is_taken(hub, people):
    """After the first collect and grading, does ada's second hand-in (07's first twin answered too) reach
    submitted/ through docs/hub.md's `nbgrader collect --update` in the instructor's terminal (the refused entries
    taken out first, as step 2 shows), which ends saying it took her later submission over the first?"""
    student, notebook, grade_id = RESUBMITTED
    page = people[student]
    nb = nbformat.read(hub_server.home(student) / A5 / notebook, as_version=4)
    ui.open_notebook(page, f"{A5}/{notebook}")
    ui.replace_cell_source(page, nb.cells.index(_cell(nb, grade_id)), solution_source(notebook, grade_id))
    ui.save(page)
    ui.open_assignments(page)
    ui.submit(page, A5)
    removed = _in_the_instructors_terminal(_instructors_block("python -m autograder inbound a5 --remove"))
    assert removed.returncode == 0, removed.stderr[-2000:]
    done = _in_the_instructors_terminal(_instructors_block("nbgrader collect --update"))
    assert done.returncode == 0, done.stderr[-3000:]
    assert re.search(rf"  {student}: handed in again: took the submission of .* over that of ", done.stderr), \
        done.stderr[-3000:]
    collected = hub_server.course_folder() / "submitted" / student / A5 / notebook
    assert solution_source(notebook, grade_id) in _cell(nbformat.read(collected, as_version=4), grade_id).source


def _gradebook():
    from nbgrader.api import Gradebook

    return Gradebook(f"sqlite:///{hub_server.course_folder() / 'gradebook.db'}")


def _manual_grades() -> dict[str, tuple[float | None, str | None]]:
    """student -> (manual score, comment) of the written answer, as the gradebook holds them."""
    with _gradebook() as gb:
        return {s: (gb.find_grade(WRITTEN, WRITTEN_NOTEBOOK, A5, s).manual_score,
                    gb.find_comment(WRITTEN, WRITTEN_NOTEBOOK, A5, s).manual_comment) for s in STUDENTS}


def test_manual_points_and_comments_from_formgrader_reach_the_gradebook(hub, people):
    """Do the points and comment the instructor types in formgrader for each student land in that student's row,
    and stay there when the grading commands run again?"""
    page = people[INSTRUCTOR]
    for student, (points, comment) in MANUAL.items():
        href = ui.submission_link(page, _server(hub, INSTRUCTOR), A5, WRITTEN_NOTEBOOK, student)
        ui.grade_by_hand(page, href, WRITTEN, points, comment)
    assert _manual_grades() == MANUAL
    # ada's later submission collected: the grading commands run again, and every manual grade stays
    rows, _ = _grade()
    assert _manual_grades() == MANUAL
    assert float(rows[ADA]["03-span-hidden"]) > 0 == float(rows[BO]["03-span-hidden"])
    assert float(rows[ADA]["07-a-test"]) > 0  # her second hand-in's answer counts


def test_feedback_is_generated_and_released_from_formgrader(hub, people):
    """Does formgrader generate and release feedback, with the manual grades still in the gradebook afterwards?"""
    page = people[INSTRUCTOR]
    ui.formgrader(page, _server(hub, INSTRUCTOR))
    # nbgrader files each student's released feedback under a hash of the submission_secret.txt that came with the
    # submission (nbgrader collect puts it in submitted/): generate_feedback takes it from autograded/
    autograded = hub_server.course_folder() / "autograded"
    lacking = [s for s in STUDENTS if not (autograded / s / A5 / "submission_secret.txt").is_file()]
    assert not lacking, f"autograded/ holds no submission_secret.txt for {lacking}: release_feedback will fail"
    ui.assignment_action(page, A5, "generate-feedback")
    # sy's hand-made submission came without nbgrader's secret, and the Canvas students' through no exchange: theirs
    # alone cannot be filed in the exchange, and the summary names each
    log = ui.assignment_action(page, A5, "release-feedback", expect_error=True)
    assert "not of " in log and all(f"  {s}: NEEDS YOU: NOT released" in log for s in (SY, *CANVAS)), log[-3000:]
    released = list((hub.exchange / "attention-course" / "feedback").glob("*.html"))
    # every notebook of the browser's and the shape students' (hubtest-del has no 07)
    assert len(released) == len(COURSE_NOTEBOOKS) * (len(STUDENTS) + len(SHAPED)) - ("hubtest-del" in SHAPED)
    assert _manual_grades() == MANUAL


@pytest.mark.parametrize("student", STUDENTS)
def test_each_student_reads_their_own_feedback_only(hub, people, student):
    """Does each student's Fetch Feedback bring their own written-answer score and comment, and nothing of the
    other student's, and can they list neither the exchange's feedback folder nor the other student's work?"""
    page = people[student]
    ui.open_assignments(page)
    ui.fetch_feedback(page, A5)
    shown = ui.read_html_file(page, f"{WRITTEN_NOTEBOOK}.html")
    other = next(s for s in STUDENTS if s != student)
    points, comment = MANUAL[student]
    assert comment in shown, shown[-2000:]
    assert MANUAL[other][1] not in shown and other not in shown
    # nbgrader's feedback page shows the written answer's score as "Score: 1.5 / 2.0" above its comment
    assert re.search(rf"Score:\s*{points:g}\s*/\s*2\.0\b", shown), shown[-2000:]
    # every feedback file they got is theirs: nothing of the other student's anywhere in it
    for page_file in (hub_server.home(student) / A5 / "feedback").rglob("*.html"):
        text = html.unescape(page_file.read_text(encoding="utf-8"))  # as a browser shows it
        assert MANUAL[other][1] not in text and other not in text, page_file.name
    # nor can they look for the other's: the exchange's feedback folder lists for nobody, the other's home neither
    for folder in (hub.exchange / "attention-course" / "feedback", hub_server.home(other) / A5):
        listing = _as_user(student, "/bin/ls", str(folder))
        assert listing.returncode != 0 and "Permission denied" in listing.stderr, (folder, listing.stdout)


@pytest.mark.parametrize("student", STUDENTS)
def test_feedback_explains_run_points_lost_and_the_total(hub, people, student):
    """Does a student's fetched feedback show, under 02's run cells, the points the grader gave each training run and
    why they were lost, and at the top the total (checks, runs and manual points) the gradebook holds?"""
    page = people[student]
    shown = ui.read_html_file(page, "02_finetune_without_pretraining.html")
    lost = re.findall(r"The course's grader: 0 of [0-9.]+ point\(s\)\. ([^<\n]+)", shown)
    run_cells = [grade_id for notebook, grade_id in run_files.RUN_CELLS.values()
                 if notebook == "02_finetune_without_pretraining"]
    assert len(lost) >= len(run_cells) and all(reason.strip() for reason in lost), shown[-3000:]
    with _gradebook() as gb:
        submission = gb.find_submission(A5, student)
        raw, maximum, penalty = submission.score, submission.max_score, submission.late_submission_penalty
    assert f"Your total for a5: {max(0.0, raw - penalty):g} of {maximum:g} points" in shown, shown[:3000]
    # ada handed in late (her penalty on the page); bo too, within his extension (none)
    assert (f"after a late penalty of {penalty:g}" in shown) == (student == ADA) and (penalty > 0) == (student == ADA)


def _in_the_instructors_terminal(command: str) -> subprocess.CompletedProcess:
    """``command`` in bash as the instructor, with their server's environment (what a terminal in their JupyterLab
    starts with: the users' Python first on PATH)."""
    [(_, env, _)] = _servers_of(INSTRUCTOR)
    return _as_user(INSTRUCTOR, "bash", "-euo", "pipefail", "-c", command, env=env)


@pytest.mark.parametrize("who", ["root", "instructor"])  # root first: its grades.csv must not lock the instructor out
def test_exported_total_is_the_gradebook_total(hub, who):
    """After root graded, does `nbgrader export` (the file for the LMS), run by root as docs/hub.md shows it and then
    by the instructor in their terminal, give each student one total: the grader's trusted scores of the answered
    cells and of the runs (their run cells) plus the manual points, the gradebook's own total?"""
    export = _docs_block("nbgrader export")
    done = _in_the_instructors_terminal(export) if who == "instructor" else _as_root(export)
    assert done.returncode == 0, done.stderr[-3000:]
    assert hub_server.course_folder().joinpath("grades.csv").owner() == INSTRUCTOR
    with open(hub_server.course_folder() / "grades.csv", newline="") as f:
        exported = {r["student_id"]: float(r["raw_score"]) for r in csv.DictReader(f) if r["student_id"] in STUDENTS}
    with open(hub_server.course_folder() / "grades" / "grades.csv", newline="") as f:
        trusted = {r["student_id"]: r for r in csv.DictReader(f)}
    checks = {"03-span-hidden": "03_span_corruption", "07-a-test": "07_attention_exploration"}
    with _gradebook() as gb:
        held = {s: gb.find_submission(A5, s).score for s in STUDENTS}
        by_hand = {s: gb.find_grade(WRITTEN, WRITTEN_NOTEBOOK, A5, s).score for s in STUDENTS}
        autograded = {(s, check): gb.find_grade(check, notebook, A5, s).score
                      for s in STUDENTS for check, notebook in checks.items()}
        # (the run cells of the hub's notebooks: none of its three trains; the honest cohort's test has the runs')
        runs = {(s, grade_id): gb.find_grade(grade_id, notebook, A5, s).score for s in STUDENTS
                for notebook, grade_id in run_files.RUN_CELLS.values() if f"{notebook}.ipynb" in COURSE_NOTEBOOKS}
    assert exported == pytest.approx(held)
    assert by_hand == {s: MANUAL[s][0] for s in STUDENTS}  # the manual points are in that total
    assert autograded == pytest.approx({(s, c): float(trusted[s][c]) for s, c in autograded})  # and the trusted ones
    run_columns = {grade_id: part for part, (_, grade_id) in run_files.RUN_CELLS.items()}
    assert runs == pytest.approx({(s, g): float(trusted[s][run_columns[g]]) for s, g in runs})  # and the runs'
    # one total: what `autograder grade` gave (answers and runs) plus what the instructor gave by hand
    assert exported == pytest.approx({s: float(trusted[s]["score"]) + MANUAL[s][0] for s in STUDENTS})


def test_each_shape_ends_with_its_total_in_the_export_and_on_its_own_page(hub):
    """Does the export give each student of a special shape the points of record of the same work, less the penalty
    their lateness earns (ada and the Canvas student marked late: 10%; bo within his extension and everyone on time:
    none), that total on their own feedback page, and does the export's summary name the late ones?"""
    done = _as_root(_docs_block("nbgrader export"))
    assert done.returncode == 0, done.stderr[-3000:]
    for line in (f"  {ADA}: a5: late by", "  canvaslate: a5: late by", f"  {EXTENDED}: a5: handed in"):
        assert line in done.stderr, (line, done.stderr[-3000:])
    with open(hub_server.course_folder() / "grades.csv", newline="") as f:
        exported = {r["student_id"]: r for r in csv.DictReader(f)}
    with open(hub_server.course_folder() / "grades" / "grades.csv", newline="") as f:
        trusted = {r["student_id"]: r for r in csv.DictReader(f)}
    assert exported["canvaslate"]["lms_late"] == "yes" and exported["canvasloose"]["lms_user_id"] == "1001"
    for student in (*STUDENTS, *SHAPED, *CANVAS):
        row = exported[student]
        raw, penalty, score = float(row["raw_score"]), float(row["late_submission_penalty"]), float(row["score"])
        late = student in (ADA, "canvaslate")
        assert penalty == pytest.approx(PENALTY * raw if late else 0.0), (student, row)
        assert score == pytest.approx(raw - penalty), (student, row)
        if student not in STUDENTS:  # nothing graded by hand: the points of record are the whole raw score
            assert raw == pytest.approx(float(trusted[student]["score"])), (student, row)
        page = hub_server.course_folder() / "feedback" / student / A5 / "03_span_corruption.html"
        assert f"Your total for a5: {score:g} of " in html.unescape(page.read_text(encoding="utf-8")), student
