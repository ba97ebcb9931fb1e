"""Hostile submissions, graded in one cohort between two references: nobody gains a point, nobody else loses one.

Each hostile student attacks one class of weakness (issue 20): forged probe
outputs, a forged answer file, reading grader-only files, signalling or
outliving the job, links to secrets, borrowed or forged run outputs, a
malicious params pickle, malformed files, filling the disk, the network.
Cheap honest ones (blank, partial, broken, empty) and a reference with hand-edited
predictions bring the cohort to 21: the score of record's ordinary cases. The
cohort is graded on two Dask workers into a PostgreSQL gradebook that the tests
start themselves, with workers killed mid-student, then again (the re-run keeps
everyone but the student it could not grade): the assertions below read that
re-run. A few students are also graded one after another into an SQLite gradebook:
both must give them the same points, row by row and cell by cell.
"""
from __future__ import annotations

import csv
import json
import os
import shutil
import socket
import tempfile
import threading
import uuid
from pathlib import Path

import dask_faults
import nbformat
import pytest
import torch
from conftest import REPO, SOLUTIONS
from gradebooks import cell_scores, course_gradebook

from autograder import confinement
from autograder.__main__ import main
from autograder.checks import registry, run_files
from autograder.exports.csv_safe import unescape_cell
from autograder.exports.gradebook import trusted_cell_scores
from autograder.grading.cohort import CACHE_DIR

pytestmark = [pytest.mark.timeout(1200),
              pytest.mark.skipif(confinement.status() is not None, reason=f"no confinement: {confinement.status()}")]

RELEASE = REPO / "notebooks" / "a5"
CANARY = f"CANARY-{uuid.uuid4().hex}"  # written into every grader-only file; must reach no student
NB02 = "02_finetune_without_pretraining.ipynb"
KILLED_ONCE, KILLED_TWICE = "aa_reference", "zz_reference"  # their workers are killed mid-grading (parallel run):
# both are graded for seconds (a probe job and a decode job), so each kill lands while its task runs
FORMULA_ID = '=HYPERLINK("evil.example";"x")'  # a student id nbgrader accepts, and a spreadsheet formula
# graded one after another into SQLite as well: a reference, a hostile one, a partial one and an empty one
SERIAL = ["aa_reference", "forges_probes", "partial", "empty"]

FORGE_PROBES = '''
try:
    import inside.probes as P
    import torch
    handout = dict(max_epochs=75, batch_size=256, learning_rate=6e-4, lr_decay=True, warmup_tokens=10240,
                   final_tokens=153600, num_workers=4)
    def config(parts, inputs):
        return {"config": handout, "trainer_config": handout, "logits": torch.zeros(2, 3, 4),
                "dataset": {"length": 2, "items": []}, "documents": ["a"], "state_after_finetune": {}, "saved": {}}
    def spans(parts, inputs):
        return [[[torch.zeros(p["block_size"] - 1, dtype=torch.long)] * 2 for _ in p["draws"]] for p in inputs["plans"]]
    def synth(parts, inputs):
        return [[torch.zeros_like(x) for x in case["inputs"]] for case in inputs["cases"]]
    def values(parts, inputs):
        return {n: torch.zeros(8, dtype=torch.float64) for n in inputs.get("names", [])}
    for name in ("finetune_config", "finetune_pretrained", "pretrain_config"):
        P.PROBES[name] = config
        setattr(P, name, config)
    P.PROBES["span_corruption"] = P.span_corruption = spans
    P.PROBES["synthesizer_outputs"] = P.synthesizer_outputs = synth
    P.PROBES["variables"] = P.variables = values
    P.PROBES["synthesizer_model"] = P.synthesizer_model = lambda parts, inputs: {"shapes": {}}
    # one level down: whatever the probes return, the answer written is made up from the request's shapes
    import inside.wire as W
    real_dumps = W.dumps
    request = W.loads(open("/job/request.json", "rb").read())
    fakes = {"finetune_config": config, "finetune_pretrained": config, "pretrain_config": config,
             "span_corruption": spans, "synthesizer_outputs": synth, "variables": values,
             "synthesizer_model": lambda parts, inputs: {"shapes": {}}}
    def dumps(result):
        checks = {c["grade_id"]: {"output": fakes[c["probe"]](None, c["inputs"])} for c in request["checks"]}
        return real_dumps({"failed_notebooks": {}, "not_written": [], "checks": checks})
    W.dumps = dumps
except ImportError:
    pass
initialize_vanilla_model = finetune = pretrain = train = CharCorruptionDataset = SynthesizerAttention = object
initialize_synthesizer_model = object
'''

WRITE_ANSWER = '''
import json, os
forged = {"failed_notebooks": {}, "not_written": [],
          "checks": {gid: {"output": {"passed": True, "config": {}, "shapes": {}}} for gid in GRADE_IDS}}
for fd in range(3, 30):
    try:
        os.write(fd, json.dumps(forged).encode())
    except OSError:
        pass
os._exit(0)
'''

# the 08 (b) answer replaced by one that reads what it can of the grader's files and raises it as its message
READ_SECRETS = '''
import os
def position_embeddings(T, d):
    found = []
    for path in PATHS:
        try:
            found.append(open(path, errors="replace").read()[:2000] if os.path.isfile(path) else str(os.listdir(path)))
        except OSError as err:
            found.append(type(err).__name__)
    raise RuntimeError("leak: " + " | ".join(found))
'''

KILL_OTHERS = '''
import os, signal, subprocess, sys
for target in (-1, os.getppid(), 1):
    try:
        os.kill(target, signal.SIGKILL)
    except OSError:
        pass
child = ("import os, signal, time\\nos.setsid()\\ntime.sleep(4)\\n"
         "try:\\n    os.kill(-1, signal.SIGKILL)\\nexcept OSError:\\n    pass")
subprocess.Popen([sys.executable, "-c", child], start_new_session=True)
for _ in range(200):
    try:
        if os.fork() == 0:
            import time; time.sleep(20); os._exit(0)
    except OSError:
        break
'''

FILL_DISK = '''
for path in ("/tmp/fill", "/dev/shm/fill", "/job/fill", "fill"):
    try:
        with open(path, "wb") as f:
            for _ in range(1024):
                f.write(b"x" * 2 ** 20)
    except OSError:
        pass
'''

FORMULA_ERROR = '''
def initialize_vanilla_model(mconf):
    raise type('=HYPERLINK("http://evil.example","click")', (Exception,), {})("=cmd|' /C calc'!A0")
def finetune(*args, **kwargs):
    raise type("E" + "NV" * 1600, (Exception,), {})("x" * 5000)
'''

# right at the public check's block sizes (drawn from two ranges), wrong at every other: no pretrained-run point
SPAN_PUBLIC_ONLY = '''
from course_lib.checks.span import SPAN_PUBLIC
_right = CharCorruptionDataset.__getitem__
def _only_at_the_public_sizes(self, idx):
    x, y = _right(self, idx)
    public = any(low <= self.block_size <= high for low, high in SPAN_PUBLIC["block_sizes"])
    return (x, y) if public else (x.flip(0), y.flip(0))
CharCorruptionDataset.__getitem__ = _only_at_the_public_sizes
'''

NETWORK = '''
import socket
for host in ("127.0.0.1", "localhost"):
    try:
        socket.create_connection((host, PORT), timeout=2).sendall(b"hello")
    except OSError:
        pass
'''


class EvilPickle:
    """Runs a command when unpickled: a params file that is really a program."""

    def __init__(self, marker: str):
        self.marker = marker

    def __reduce__(self):
        return (os.system, (f"touch {self.marker}",))


def _with_cell(folder: Path, name: str, source: str, index: int = 2) -> None:
    nb = nbformat.read(folder / name, as_version=4)
    nb.cells.insert(index, nbformat.v4.new_code_cell(source))
    nbformat.write(nb, folder / name)


def _after(folder: Path, name: str, grade_id: str) -> int:
    """The index just after the cell of ``grade_id``: a cell there is what that answer's test cells see (a check
    runs where its test cell stands)."""
    nb = nbformat.read(folder / name, as_version=4)
    return 1 + next(i for i, c in enumerate(nb.cells) if c.metadata.get("nbgrader", {}).get("grade_id") == grade_id)


@pytest.fixture(scope="module")
def cohort(tmp_path_factory, world_dir, world_answers, smoke_runs):
    """Two references with smoke runs, and one hostile student per attack between them."""
    root = tmp_path_factory.mktemp("cohort")
    grader_only = root / "grader_only"
    grader_only.mkdir(mode=0o700)
    answers = grader_only / "birth_test.tsv"
    shutil.copy(world_answers, answers)
    (grader_only / "gradebook.db").write_text(CANARY)
    submitted = root / "submitted"
    ref = submitted / "aa_reference" / "a5"
    shutil.copytree(SOLUTIONS, ref)
    shutil.copytree(smoke_runs, ref / "outputs")
    shutil.copytree(ref, submitted / "zz_reference" / "a5")

    def blank(student: str) -> Path:
        folder = submitted / student / "a5"
        shutil.copytree(RELEASE, folder)
        return folder

    def solved(student: str) -> Path:
        folder = submitted / student / "a5"
        shutil.copytree(ref, folder)
        return folder

    _with_cell(blank("forges_probes"), NB02, FORGE_PROBES, index=99)
    gids = [c.grade_id for c in registry.CHECKS]
    _with_cell(blank("writes_answer"), NB02, f"GRADE_IDS = {gids!r}\n" + WRITE_ANSWER)
    secrets = [str(answers), str(grader_only / "gradebook.db"), str(SOLUTIONS / "05_synthesizer.ipynb"),
               str(REPO / ".git" / "HEAD"), str(ref / "outputs" / "vanilla.finetune.params"), str(submitted),
               "/etc/shadow", str(Path(tempfile.gettempdir()))]
    reader = solved("reads_secrets")
    _with_cell(reader, "08_position_embeddings.ipynb", f"PATHS = {secrets!r}\n" + READ_SECRETS,
               _after(reader, "08_position_embeddings.ipynb", "08-b-code"))
    _with_cell(blank("kills_others"), NB02, KILL_OTHERS)
    links = submitted / "symlinks" / "a5"
    links.mkdir(parents=True)
    os.symlink(answers, links / NB02)
    os.symlink(ref / "outputs", links / "outputs")
    os.symlink(SOLUTIONS / "05_synthesizer.ipynb", links / "05_synthesizer.ipynb")
    # right predictions (read off the answers and dev files) beside untrained params of the right shape
    borrowed = solved("right_answers_untrained")
    untrained = torch.load(ref / "outputs" / "vanilla.finetune.params", weights_only=True)
    torch.save({k: torch.zeros_like(v) for k, v in untrained.items()}, borrowed / "outputs" / "vanilla.finetune.params")
    places = [line.split("\t")[1] for line in answers.read_text().splitlines()]
    (borrowed / "outputs" / "vanilla.pretrain.test.predictions").write_text("".join(p + "\n" for p in places))
    evil = solved("evil_pickle")
    marker = Path(tempfile.mkdtemp(prefix="adversarial-")) / "pickle-ran"
    torch.save(EvilPickle(str(marker)), evil / "outputs" / "vanilla.model.params")
    malformed = blank("malformed")
    (malformed / NB02).unlink()
    (malformed / NB02).mkdir()
    (malformed / "03_span_corruption.ipynb").write_bytes(os.urandom(4096))
    (malformed / "04_pretrain_then_finetune.ipynb").write_text(json.dumps({"cells": "not a list", "nbformat": 4}))
    _with_cell(blank("fills_disk"), NB02, FILL_DISK)
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    listener.settimeout(0.5)
    _with_cell(blank("network"), NB02, f"PORT = {listener.getsockname()[1]}\n" + NETWORK)
    formula = blank(FORMULA_ID)
    _with_cell(formula, NB02, FORMULA_ERROR, index=_after(formula, NB02, "02-glue"))
    _with_cell(solved("span_public_only"), "03_span_corruption.ipynb", SPAN_PUBLIC_ONLY, index=3)
    oversized = blank("oversized_params")
    (oversized / "outputs").mkdir()
    for name in ("vanilla.model.params", "vanilla.finetune.params", "synthesizer.finetune.params"):
        with open(oversized / "outputs" / name, "wb") as f:
            f.truncate(250 * 2 ** 20)  # sparse: costs the test nothing, the grader its size
    _honest_students(submitted, blank)
    hand_edited = solved("hand_edited")  # the reference's params, one predictions file typed in by hand
    edited = hand_edited / "outputs" / "vanilla.pretrain.dev.predictions"
    edited.write_text("".join("Atlantis\n" for _ in edited.read_text().splitlines()))
    yield dict(root=root, submitted=submitted, answers=answers, marker=marker, listener=listener)
    listener.close()
    shutil.rmtree(marker.parent, ignore_errors=True)


def _honest_students(submitted: Path, blank) -> None:
    """Cheap honest submissions (one probe job at most, no run files): blank, partial, broken, empty, misplaced."""
    blank("blank")
    partial = blank("partial")  # notebooks 03 and 07 done, the rest as released
    for name in ("03_span_corruption.ipynb", "07_attention_exploration.ipynb"):
        shutil.copy(SOLUTIONS / name, partial / name)
    shutil.copytree(SOLUTIONS, submitted / "notebooks_only" / "a5")  # every code point, no run files
    syntax = blank("syntax_error")
    shutil.copy(SOLUTIONS / "03_span_corruption.ipynb", syntax / "03_span_corruption.ipynb")
    _with_cell(syntax, "03_span_corruption.ipynb", "class CharCorruptionDataset(:\n    pass\n", index=99)
    (blank("broken_json") / "05_synthesizer.ipynb").write_text('{"cells": [ this is not JSON')
    (submitted / "empty" / "a5").mkdir(parents=True)
    shutil.copytree(SOLUTIONS, submitted / "one_level_too_deep" / "a5" / "a5")  # no notebook where it belongs
    (submitted / "no_assignment_folder").mkdir()
    (submitted / "no_assignment_folder" / "notes.txt").write_text("handed in the wrong folder")


def _grade(cohort, world_dir, out: Path, *options: str, status: int = 0) -> dict:
    """One grading of the whole cohort, with the grader's temporary files in a folder of their own, and a server
    on this machine listening for connections. (Dask workers keep theirs in their cluster's own folder.) ``status``:
    the command's exit status (1 when its summary names a student the grader could not grade)."""
    scratch = Path(tempfile.mkdtemp(prefix="adversarial-tmp-"))
    connections = []

    def accept():
        while not stop.is_set():
            try:
                connections.append(cohort["listener"].accept())
            except OSError:
                pass

    stop = threading.Event()
    watcher = threading.Thread(target=accept, daemon=True)
    watcher.start()
    saved, tempfile.tempdir = tempfile.tempdir, str(scratch)
    try:
        code = main(["grade", str(cohort["submitted"]), "--out", str(out), "--data-dir", str(world_dir), "--answers",
                     str(cohort["answers"]), "--preset", "smoke", "--gradescope", "--timeout", "240", *options])
    finally:
        tempfile.tempdir = saved
        stop.set()
        watcher.join()
    assert code == status
    with open(out / "grades.csv") as f:
        rows = {unescape_cell(r["student_id"]): r for r in csv.DictReader(f)}
    return dict(out=out, rows=rows, reasons=json.loads((out / "reasons.json").read_text()), scratch=scratch,
                connections=connections)


def _students(cohort) -> list[str]:
    return sorted(p.name for p in cohort["submitted"].iterdir())


@pytest.fixture(scope="module")
def graded_serially(cohort, world_dir, tmp_path_factory):
    """A few of the cohort (SERIAL) graded one student after another into an SQLite gradebook: the parallel run's
    rows and cells must equal theirs."""
    out = tmp_path_factory.mktemp("grades-serial")
    url = course_gradebook(f"sqlite:///{tmp_path_factory.mktemp('gradebook') / 'gradebook.db'}", SERIAL)
    grading = _grade(cohort, world_dir, out, "--workers", "1", "--gradebook", url,
                     *(option for student in SERIAL for option in ("--student", student)))
    yield {**grading, "gradebook": url}
    shutil.rmtree(grading["scratch"], ignore_errors=True)


@pytest.fixture(scope="module")
def graded(graded_parallel):
    """The whole cohort's rows as the parallel run's re-run wrote them (every student graded, once)."""
    return graded_parallel


@pytest.fixture(scope="module")
def graded_parallel(cohort, world_dir, tmp_path_factory, postgres):
    """The same cohort on two Dask workers into a PostgreSQL gradebook, with the worker under KILLED_ONCE's task
    killed (kill -9) once and the one under KILLED_TWICE's twice; then the same command again."""
    students = _students(cohort)
    url = course_gradebook(postgres.create_database("adversarial"), students)
    out = tmp_path_factory.mktemp("grades-parallel")
    with dask_faults.local_cluster(workers=2) as cluster:
        options = ("--scheduler", cluster.scheduler_address, "--gradebook", url)
        deaths = {students.index(KILLED_ONCE): 1, students.index(KILLED_TWICE): 2}
        with dask_faults.killing(cluster.scheduler_address, deaths) as killed:
            first = _grade(cohort, world_dir, out, *options, status=1)  # KILLED_TWICE not graded: needs you
        first["kept"] = sorted(p.stem for p in (out / CACHE_DIR).iterdir())
        again = _grade(cohort, world_dir, out, *options)
    yield {**again, "first": first, "killed": [students[i] for i in killed], "gradebook": url}
    for grading in (first, again):
        shutil.rmtree(grading["scratch"], ignore_errors=True)


def _score(graded, student) -> float:
    return float(graded["rows"][student]["score"])


def test_every_student_has_a_row_with_reasons(graded, cohort):
    """Does every student, however hostile, get a row, and every lost point a reason?"""
    students = {p.name for p in cohort["submitted"].iterdir()}
    assert set(graded["rows"]) == students
    for student, parts in graded["reasons"].items():
        assert all(p["reason"] for p in parts if p["points"] < p["max_points"]), student


def test_references_keep_full_marks(graded):
    """Do both references, graded before and after every attack, keep every point?"""
    for student in ("aa_reference", "zz_reference"):
        row = graded["rows"][student]
        assert float(row["score"]) == float(row["max_score"]), graded["reasons"][student]


@pytest.mark.parametrize("student", ["forges_probes", "writes_answer", "kills_others", "symlinks", "malformed",
                                     "fills_disk", "network", FORMULA_ID, "oversized_params"])
def test_hostile_blank_submissions_gain_nothing(graded, student):
    """Does a blank release plus an attack (forged outputs, forged answer, signals, links, junk) score zero?"""
    assert _score(graded, student) == 0, graded["reasons"][student]


def test_reading_secrets_gains_nothing_and_leaks_nothing(graded):
    """Can a submission read grader-only files, or carry them back through an error message? (no)"""
    by_part = {p["part"]: p for p in graded["reasons"]["reads_secrets"]}
    twin_08_b = [gid for gid in by_part if gid.startswith("08-b")]
    for gid in twin_08_b:
        assert by_part[gid]["points"] == 0 and "RuntimeError" in by_part[gid]["reason"], by_part[gid]
        assert "leak:" not in by_part[gid]["reason"]
    lost = sum(registry.BY_ID[gid].points for gid in twin_08_b)
    assert _score(graded, "reads_secrets") == _score(graded, "aa_reference") - lost


def test_no_grader_only_byte_reaches_a_student(graded, cohort):
    """Do the answers, the gradebook or another student's files appear in anything a student receives? (no)"""
    student_facing = [graded["out"] / "reasons.json", graded["out"] / "grades.csv",
                      *(graded["out"] / "gradescope").rglob("*.json")]
    answer_lines = cohort["answers"].read_text().splitlines()[:20]
    for path in student_facing:
        text = path.read_text()
        assert CANARY not in text and "root:" not in text and "ref: refs/heads" not in text, path
        assert not any(line in text for line in answer_lines), path


def test_right_predictions_from_untrained_params_score_nothing(graded):
    """Do predictions the submitted params do not produce score zero, however right they are?"""
    by_part = {p["part"]: p for p in graded["reasons"]["right_answers_untrained"]}
    assert by_part["vanilla_pretrain/test"]["points"] == 0
    assert "must come from the submitted params" in by_part["vanilla_pretrain/test"]["reason"]


def test_a_params_pickle_never_runs(graded, cohort):
    """Is a params file that would run a program when unpickled refused, without running it?"""
    by_part = {p["part"]: p for p in graded["reasons"]["evil_pickle"]}
    assert by_part["vanilla_nopretrain/dev"]["points"] == 0
    assert "could not be loaded" in by_part["vanilla_nopretrain/dev"]["reason"]
    assert not cohort["marker"].exists()


def test_links_are_dropped_not_followed(graded):
    """Are symlinked notebooks and output folders left out, with the reason in the instructor's log?"""
    log = (graded["out"] / "instructor_log.txt").read_text()
    assert "symbolic link" in log
    reasons = " ".join(p["reason"] for p in graded["reasons"]["symlinks"])
    assert CANARY not in reasons and "Where was" not in reasons


def test_every_autograded_cell_and_run_split_is_scored(graded):
    """Is the score out of every autograded nbgrader point plus every run split, one column each?"""
    row = graded["rows"]["aa_reference"]
    assert float(row["max_score"]) == registry.code_points() + 24
    assert {c.grade_id for c in registry.CHECKS} <= set(row)


def test_blank_release_gets_zero_with_reasons(graded):
    """Does the blank release score zero, each part saying what is missing and where?"""
    assert _score(graded, "blank") == 0
    by_part = {p["part"]: p["reason"] for p in graded["reasons"]["blank"]}
    assert by_part["03-span-public"].startswith("not written yet") and "03_span_corruption.ipynb cell" in \
        by_part["03-span-public"]
    assert "has to pass first" in by_part["vanilla_pretrain/dev"]


def test_hand_edited_predictions_are_caught(graded):
    """Do predictions that the submitted params do not produce get zero for that part, with the reason?"""
    part = next(p for p in graded["reasons"]["hand_edited"] if p["part"] == "vanilla_pretrain/dev")
    assert part["points"] == 0 and "must come from the submitted params" in part["reason"]
    assert _score(graded, "hand_edited") == _score(graded, "aa_reference") - part["max_points"]


def test_corrupt_notebook_gets_its_row(graded):
    """Does a notebook that is not JSON get a row with zero and a readable reason instead of stopping the batch?"""
    part = next(p for p in graded["reasons"]["broken_json"] if p["part"] == "05-synthesizer-equivalence")
    assert part["points"] == 0 and "05_synthesizer.ipynb could not be read as a notebook" in part["reason"], part


def test_identical_submissions_are_flagged_with_both_names(graded):
    """Are byte-identical params handed in by two students listed for the instructor with both names?"""
    with open(graded["out"] / "flags.csv") as f:
        flags = list(csv.DictReader(f))
    assert any(r["file"] == "vanilla.finetune.params" and {r["student"], r["other_student"]} ==
               {"aa_reference", "zz_reference"} for r in flags)


def test_gradescope_results_written(graded):
    """Is a Gradescope results.json with one test per check and run split written for each student?"""
    for student in graded["rows"]:
        result = json.loads((graded["out"] / "gradescope" / student / "results.json").read_text())
        assert len(result["tests"]) == len(registry.CHECKS) + 6, student


def test_cohort_is_mixed_and_large_enough(graded):
    """Does the cohort hold at least 20 students, with blank, partial and full-marks code among them?"""
    assert len(graded["rows"]) >= 20
    assert _score(graded, "notebooks_only") == registry.code_points()
    assert 0 < _score(graded, "partial") < registry.code_points()
    for student in ("blank", "broken_json", "empty", "no_assignment_folder", "one_level_too_deep"):
        assert _score(graded, student) == 0, graded["reasons"][student]


def test_killed_workers_cost_no_grade(graded_parallel, cohort):
    """With workers killed (kill -9) mid-student, is the student killed once graded on its retry, the one killed
    twice marked and not kept, everyone else graded as usual, each once; and does the re-run grade only the marked
    one?"""
    first, again = graded_parallel["first"], graded_parallel
    assert sorted(graded_parallel["killed"]) == sorted([KILLED_ONCE, KILLED_TWICE, KILLED_TWICE])
    assert list(first["rows"]) == _students(cohort) == list(again["rows"])  # every student once, in order
    marked = first["reasons"][KILLED_TWICE]
    assert all("could not grade" in p["reason"] for p in marked), marked
    assert {s: r for s, r in first["rows"].items() if s != KILLED_TWICE} == \
        {s: r for s, r in again["rows"].items() if s != KILLED_TWICE}
    assert first["kept"] == [s for s in _students(cohort) if s != KILLED_TWICE]
    log = (again["out"] / "instructor_log.txt").read_text()
    assert log.count("kept from an earlier grading") == len(again["rows"]) - 1


def test_parallel_on_postgres_equals_serial_on_sqlite(graded_serially, graded_parallel):
    """Do two Dask workers with a PostgreSQL gradebook give the students graded serially too the same points as one
    student after another with SQLite, in grades.csv and in the gradebook, every cell the trusted points?"""
    assert {s: graded_parallel["rows"][s] for s in SERIAL} == graded_serially["rows"]
    serial = cell_scores(graded_serially["gradebook"])
    parallel = {key: value for key, value in cell_scores(graded_parallel["gradebook"]).items() if key[0] in SERIAL}
    assert parallel == serial
    trusted = {(s, *cell): points for s, parts in graded_parallel["reasons"].items()
               for cell, points in trusted_cell_scores((p["part"], p["points"]) for p in parts).items()}
    everyone = cell_scores(graded_parallel["gradebook"])
    assert {key: everyone[key] for key in trusted} == trusted  # the gradebook holds the trusted points, runs too
    assert len(trusted) == len(graded_parallel["rows"]) * (len(registry.CHECKS) + len(run_files.RUN_CELLS))


def test_gradings_reach_no_network_and_leave_no_files(graded_parallel, graded_serially):
    """On Dask workers and one after another, did no job connect to a server on this machine or leave temporary
    files? (no)"""
    for grading in (graded_parallel["first"], graded_parallel, graded_serially):
        assert grading["connections"] == []
        assert list(grading["scratch"].iterdir()) == []


def test_no_csv_cell_starts_a_formula_and_reasons_stay_short(graded):
    """Does the formula-named student (and its formula-named exception) reach every CSV as text, and does every reason
    stay short, naming no exception type of the student's own?"""
    for name in ("grades.csv", "flags.csv", "refused.csv"):
        with open(graded["out"] / name, newline="", encoding="utf-8") as f:
            cells = [cell for row in csv.reader(f) for cell in row]
        assert not [c for c in cells if c.startswith(("=", "+", "-", "@"))], name
    parts = graded["reasons"][FORMULA_ID]
    for part in parts:
        assert len(part["reason"]) <= 300 and "HYPERLINK" not in part["reason"] and "NVNV" not in part["reason"]
    assert all(len(p["reason"]) <= 300 for parts in graded["reasons"].values() for p in parts)
    glue = next(p for p in parts if p["part"] == "02-glue-config")
    assert glue["reason"].startswith("your code raised an error"), glue


def test_a_span_corruption_right_only_at_the_public_size_earns_no_pretrained_run_point(graded):
    """Does span corruption that passes the public check but fails the hidden one cost every pretrained run split?"""
    by_part = {p["part"]: p for p in graded["reasons"]["span_public_only"]}
    assert by_part["03-span-public"]["points"] > 0 and by_part["03-span-hidden"]["points"] == 0
    for label, part in by_part.items():
        if label.startswith(("vanilla_pretrain/", "synthesizer_pretrain/")):
            assert part["points"] == 0 and "03-span-hidden" in part["reason"], part


def test_oversized_params_are_left_out_by_size(graded):
    """Are 250 MB params files left out at collect with their size in the instructor's log, never read?"""
    log = (graded["out"] / "instructor_log.txt").read_text()
    assert log.count("250 MB, over the 64 MB limit") == 3
