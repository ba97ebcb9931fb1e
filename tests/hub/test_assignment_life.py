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
"""
from __future__ import annotations

import csv
import datetime
import os
import pwd
import re
import shlex
import subprocess
import textwrap
from pathlib import Path

import nbformat
import pytest

from autograder.checks import run_files
from course_lib.layout import REPO, SOLUTIONS_DIR

from . import hub_server, ui
from .conftest import COURSE_NOTEBOOKS
from .hub_server import HOSTILE, INSTRUCTOR, STUDENTS

pytestmark = [pytest.mark.timeout(600), pytest.mark.usefixtures("step")]

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
                          text=True, timeout=540)


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
    with open(hub_server.course_folder() / "collect_refused.csv", newline="") as f:
        refused = {(r["claimed_student"], r["owner"]): r["why"] for r in csv.DictReader(f)}
    assert set(refused) == {(ADA, EVE), (MAL, MAL)}, refused
    assert "PermissionError" in refused[(MAL, MAL)] and f"owned by {EVE}" in refused[(ADA, EVE)]
    listing = _in_the_instructors_terminal(f"cd ~/attention-course && python -m autograder inbound {A5}")
    assert listing.returncode == 0 and f"claims {ADA}, owned by {EVE}" in listing.stdout, listing.stderr[-2000:]


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


def _grade() -> dict[str, dict[str, str]]:
    """Run docs/hub.md's grading commands as root; return grades/grades.csv's rows by student."""
    done = _as_root(_docs_block("autograder autograde"))
    assert done.returncode == 0, f"{done.stdout[-2000:]}\n{done.stderr[-3000:]}"
    with open(hub_server.course_folder() / "grades" / "grades.csv", newline="") as f:
        return {r["student_id"]: r for r in csv.DictReader(f)}


def test_grading_commands_run_on_the_collected_submissions(hub):
    """Do docs/hub.md's grading commands, run as root in the instructor's course folder, grade each student's own
    answer (ada the span points, bo the twin's, neither the other's), with no checksum warning for these honest
    students, and leave every file of the course folder the instructor's?"""
    rows = _grade()
    assert set(rows) == {*STUDENTS, SY}  # eve's forgery and mal's unreadable folder were never collected
    assert float(rows[ADA]["03-span-hidden"]) > 0 == float(rows[BO]["03-span-hidden"])
    assert float(rows[BO]["07-a-test"]) > 0 == float(rows[ADA]["07-a-test"])
    course = hub_server.course_folder()
    # nbgrader's "Attribute 'checksum' for cell ... has changed!": neither honest student changed a locked cell (sy's
    # hand-made notebooks did: nbgrader says so for her alone)
    log = (course / "autograde_log.txt").read_text(encoding="utf-8")
    sections = {part.split(":", 1)[0]: part for part in log.split("\n===== ")[1:]}
    assert all("has changed" not in sections[student] for student in STUDENTS), log[-3000:]
    assert "has changed" in sections[SY]
    roots = [str(p.relative_to(course)) for p in course.rglob("*") if p.lstat().st_uid == 0]
    assert not roots, roots[:20]


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
    # a late submission collected: the grading commands run again, and every manual grade stays
    rows = _grade()
    assert _manual_grades() == MANUAL
    assert float(rows[ADA]["03-span-hidden"]) > 0 == float(rows[BO]["03-span-hidden"])


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
    # sy's hand-made submission came without nbgrader's secret: hers alone cannot be filed in the exchange
    log = ui.assignment_action(page, A5, "release-feedback", expect_error=True)
    assert f"not of {SY}" in log, log[-3000:]
    released = list((hub.exchange / "attention-course" / "feedback").glob("*.html"))
    assert len(released) == len(STUDENTS) * len(COURSE_NOTEBOOKS)  # every notebook of both students
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
        text = page_file.read_text(encoding="utf-8")
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
        total, maximum = gb.find_submission(A5, student).score, gb.find_submission(A5, student).max_score
    assert f"Your total for a5: {total:g} of {maximum:g} points" in shown, shown[:3000]


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
