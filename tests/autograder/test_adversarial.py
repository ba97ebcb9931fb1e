"""Hostile submissions, graded in one cohort between two references: nobody gains a point, nobody else loses one.

Each hostile student attacks one class of weakness (issue 20): forged probe
outputs, a forged answer file, reading grader-only files, signalling or
outliving the job, links to secrets, borrowed or forged run outputs, a
malicious params pickle, malformed files, filling the disk, the network.
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

import nbformat
import pytest
import torch

from autograder import confinement, registry
from autograder.__main__ import main
from course_lib.runs import RUNS, run

from conftest import REPO, SOLUTIONS

pytestmark = [pytest.mark.timeout(1200),
              pytest.mark.skipif(confinement.status() is not None, reason=f"no confinement: {confinement.status()}")]

RELEASE = REPO / "notebooks" / "a5"
CANARY = f"CANARY-{uuid.uuid4().hex}"  # written into every grader-only file; must reach no student
NB02 = "02_finetune_without_pretraining.ipynb"

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

READ_SECRETS = '''
import os
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
child = "import os, signal, time\\nos.setsid()\\ntime.sleep(4)\\ntry:\\n    os.kill(-1, signal.SIGKILL)\\nexcept OSError:\\n    pass"
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


@pytest.fixture(scope="module")
def cohort(tmp_path_factory, world_dir, world_answers, reference):
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
    for name in RUNS:
        run(name, reference, preset="smoke", data_dir=world_dir, out_dir=ref / "outputs", progress=False)
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
    _with_cell(solved("reads_secrets"), "08_position_embeddings.ipynb", f"PATHS = {secrets!r}\n" + READ_SECRETS, 99)
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
    return dict(root=root, submitted=submitted, answers=answers, marker=marker, listener=listener)


@pytest.fixture(scope="module")
def graded(cohort, world_dir, tmp_path_factory):
    """One grading of the whole cohort, with the grader's temporary files kept in a folder of their own."""
    out = tmp_path_factory.mktemp("grades")
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
                     str(cohort["answers"]), "--preset", "smoke", "--gradescope", "--timeout", "240"])
    finally:
        tempfile.tempdir = saved
        stop.set()
        watcher.join()
    assert code == 0
    with open(out / "grades.csv") as f:
        rows = {r["student_id"]: r for r in csv.DictReader(f)}
    return dict(out=out, rows=rows, reasons=json.loads((out / "reasons.json").read_text()), scratch=scratch,
                connections=connections)


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
                                     "fills_disk", "network"])
def test_hostile_blank_submissions_gain_nothing(graded, student):
    """Does a blank release plus an attack (forged outputs, forged answer, signals, links, junk) score zero?"""
    assert _score(graded, student) == 0, graded["reasons"][student]


def test_reading_secrets_gains_nothing_and_leaks_nothing(graded):
    """Can a submission read grader-only files, or carry them back through an error message? (no)"""
    by_part = {p["part"]: p for p in graded["reasons"]["reads_secrets"]}
    assert by_part["08-b-test"]["points"] == 0 and "RuntimeError" in by_part["08-b-test"]["reason"]
    assert "leak:" not in by_part["08-b-test"]["reason"]
    assert _score(graded, "reads_secrets") == _score(graded, "aa_reference") - 2  # the two twins of notebook 08


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


def test_nothing_reaches_the_network_or_stays_in_tmp(graded):
    """Did any job connect to a server on this machine, or leave files in the grader's temporary folder? (no)"""
    assert graded["connections"] == []
    assert list(graded["scratch"].iterdir()) == []
