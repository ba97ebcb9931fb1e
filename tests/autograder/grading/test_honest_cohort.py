"""An honest cohort: the reference's work handed in the ways real students hand it in, every one at full marks.

Each student is the reference solution (and its smoke-preset run files, trained with the
student's own personal seed as the notebooks do) in other shapes a student's Jupyter, editor,
operating system or file tools produce: IPython syntax in extra or
answer cells, other notebook format versions (4.0, 4.2, 4.4) and line ends, notebooks a Windows
editor saved (a byte-order mark and CRLF), a notebook handed in only as a renamed copy (a
browser's "(1)" download, another letter case), a helper a cell writes with ``%%writefile`` and
the next cell imports, exploration cells of the student's own that run past the cell limit, saved
outputs, predictions files
with Windows line ends or a byte-order mark or a trailing blank line, thousands of other files,
run files at the top, hard links (a backup, a cohort gathered with ``cp -al``), ids nbgrader
accepts, and other correct code (span corruption drawn with torch, an einsum synthesizer with
its mask a persistent buffer, params saved through DataParallel, the twins written other ways), and
notebooks run as Jupyter's Run All runs them (an answer using an exploration cell's name, a checked name
rebound after its test cell passed, cells split in JupyterLab).
Both graders run on the cohort with the instructor's commands, as root with confinement:
``autograder autograde`` (nbgrader, in the grading kernel) and ``autograder grade`` (the score of
record, into the same gradebook). Every student must get the reference's score in both.
nbgrader reads notebooks only: students whose notebooks are the reference's byte for byte and
whose ids are plain (the run-file shapes, whose other files the collect step leaves out for both
graders alike) go through ``autograder grade`` only. Shapes that touch different files share a
student. Both keep the module inside the suite's time budget.
"""
from __future__ import annotations

import csv
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
import torch
from conftest import REPO, SOLUTIONS
from honest_code import (
    SPAN_WITH_TORCH,
    SYNTH_EINSUM_PERSISTENT_MASK,
    SYNTH_FUNCTIONAL_DROPOUT,
    TWINS_07,
    TWINS_08,
)
from jupyterlab_edits import split_cell

from autograder import confinement
from autograder.__main__ import main
from autograder.exports.csv_safe import unescape_cell

pytestmark = [pytest.mark.timeout(1500),
              pytest.mark.skipif(confinement.status() is not None, reason=f"no confinement: {confinement.status()}")]

NB02, NB03, NB04, NB05 = ("02_finetune_without_pretraining.ipynb", "03_span_corruption.ipynb",
                          "04_pretrain_then_finetune.ipynb", "05_synthesizer.ipynb")
NB06, NB07, NB08 = ("06_considerations_in_pretrained_knowledge.ipynb", "07_attention_exploration.ipynb",
                    "08_position_embeddings.ipynb")
PREDICTIONS = "vanilla.pretrain.dev.predictions"
SLOW_SECONDS, CELL_LIMIT = 10, 6  # a student's own slow exploration cell, and the score of record's cell limit here

# --- shaping a copy of the reference -------------------------------------------------------------------

def _edit(folder: Path, name: str, change) -> None:
    nb = nbformat.read(folder / name, as_version=4)
    change(nb)
    nbformat.write(nb, folder / name)


def _add_cell(folder: Path, name: str, source: str, index: int = 99) -> None:
    _edit(folder, name, lambda nb: nb.cells.insert(index, nbformat.v4.new_code_cell(source)))


def _answer(nb, grade_id: str):
    return next(c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") == grade_id)


def _add_cell_after(folder: Path, name: str, grade_id: str, source: str) -> None:
    _edit(folder, name, lambda nb: nb.cells.insert(nb.cells.index(_answer(nb, grade_id)) + 1,
                                                   nbformat.v4.new_code_cell(source)))


def _split(folder: Path, name: str, grade_id: str, at: str) -> None:
    _edit(folder, name, lambda nb: split_cell(nb, grade_id, at))


def _replace_answer(folder: Path, name: str, grade_id: str, source: str) -> None:
    def change(nb):
        _answer(nb, grade_id).source = source
    _edit(folder, name, change)


def _prefix_answer(folder: Path, name: str, grade_id: str, prefix: str) -> None:
    def change(nb):
        cell = _answer(nb, grade_id)
        cell.source = prefix + cell.source
    _edit(folder, name, change)


def _as_nbformat(folder: Path, minor: int) -> None:
    """Every notebook as an older Jupyter saves it: format 4.``minor``, no cell ids."""
    for path in folder.glob("*.ipynb"):
        raw = json.loads(path.read_text(encoding="utf-8"))
        raw["nbformat_minor"] = minor
        for cell in raw["cells"]:
            cell.pop("id", None)
        path.write_text(json.dumps(raw, indent=1), encoding="utf-8")


def _windows_files(folder: Path) -> None:
    """Notebooks and predictions with CRLF line ends, notebooks two-space indented with a UTF-8 byte-order mark (a
    Windows editor's save)."""
    for path in folder.glob("*.ipynb"):
        raw = json.loads(path.read_text(encoding="utf-8"))
        path.write_bytes(b"\xef\xbb\xbf" + json.dumps(raw, indent=2, ensure_ascii=False).replace("\n", "\r\n").encode())
    for path in (folder / "outputs").glob("*.predictions"):
        path.write_bytes(path.read_bytes().replace(b"\n", b"\r\n"))


def _saved_outputs(folder: Path) -> None:
    """Notebooks saved after a run: execution counts and an output on every code cell."""
    for path in folder.glob("*.ipynb"):
        def change(nb):
            for count, cell in enumerate((c for c in nb.cells if c.cell_type == "code"), 1):
                cell.execution_count = count
                cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text=f"ran {count}\n")]
        _edit(folder, path.name, change)


def _params(folder: Path, change) -> None:
    for path in (folder / "outputs").glob("*.params"):
        state = torch.load(path, weights_only=True)
        torch.save(change(path.name, state), path)


def _with_persistent_masks(name: str, state: dict) -> dict:
    """A synthesizer model's params as a model whose mask is a persistent buffer saves them."""
    if not name.startswith("synthesizer"):
        return state
    blocks = sorted({k.split(".")[1] for k in state if k.startswith("blocks.")})
    size = state["pos_emb"].shape[1]
    mask = torch.tril(torch.ones(size, size)).view(1, 1, size, size)
    return {**state, **{f"blocks.{b}.attn.mask": mask.clone() for b in blocks}}


def _shapes(submitted: Path, copy) -> dict[str, list[str]]:
    """Make the honest students from fresh copies of the reference: student id -> the shapes it hands in.

    Shapes that touch different files, or compose as real saves do, share a student (the IPython
    lines go into four notebooks of one student, an unusual id carries other code, an older
    Jupyter saves outputs too), so both graders' work fits the suite's time budget. A lost point
    names the student's shapes.
    """
    made: dict[str, Path] = {}
    shapes: dict[str, list[str]] = {}

    def student(name, *carried):
        if name not in made:
            made[name] = copy(name)
            shapes[name] = []
        shapes[name].extend(carried)
        return made[name]

    # reference, then six students through both graders (their notebooks or ids differ) and two through the score of
    # record only (the reference's notebooks with other files, one folder hard-linked into the other); each student
    # carries shapes that touch different cells or compose as real saves do
    lines = student("ipython_lines", "display() and ?", "%%bash", "! escapes", "% continuation and await",
                    "an answer whose first line uses an exploration's name",
                    "a cell of their own using an exploration's names",
                    f"an exploration of {SLOW_SECONDS} s in 03, 05, 07 and 08",
                    "a course plot's axes changed, then a name the answer uses", "nbformat 4.2")
    _add_cell(lines, NB02, "display(initialize_vanilla_model)\nfinetune?\n%matplotlib inline")
    _add_cell(lines, NB03, "%%bash\necho this cell is for the student's own eyes", 3)
    _add_cell(lines, NB04, "files = !ls\n!pip install --quiet nothing-from-the-network\nprint(len(files))")
    _add_cell(lines, NB05, "remainder = 17 \\\n% 5\nprint(remainder)\nimport asyncio\nawait asyncio.sleep(0)")
    _prefix_answer(lines, NB02, "02-glue", "assert data_dir.is_dir()  # the course data, found by the cell above\n")
    _add_cell_after(lines, NB02, "02-given-4", "print(len(names), 'questions;', vocab_source.vocab_size, 'symbols')")
    _add_cell_after(lines, NB03, "03-given-2", "from course_lib.notebook.plots import plot_loss\n"
                                               "ax = plot_loss([{'step': i, 'loss': 1 / (i + 1)} for i in range(30)])\n"
                                               "ax.set_yscale('log')\nspan_floor = 1  # after the plot, in its cell")
    _prefix_answer(lines, NB03, "03-span-corruption", "assert span_floor == 1  # from my plot cell above\n")
    for notebook in (NB03, NB05, NB07, NB08):  # past the score of record's cell limit, within nbgrader's
        _add_cell(lines, notebook, f"import time\ntime.sleep({SLOW_SECONDS})  # my own long exploration\nexplored = 1")
    _as_nbformat(lines, 2)
    own_cells = student("Ana María 李雷 👩\u200d🔬", "an id with a space and an accent",
                        "an id in Chinese characters and an emoji joined by U+200D", "%%time on an answer",
                        "a cell asking for the data", "an exploration that fails",
                        "an einsum synthesizer with a persistent mask", "params saved through DataParallel",
                        "saved outputs", "nbformat 4.4", "03 renamed in another letter case")
    _prefix_answer(own_cells, NB03, "03-span-corruption", "%%time\n")
    _replace_answer(own_cells, NB05, "05-synthesizer", SYNTH_EINSUM_PERSISTENT_MASK)
    _params(own_cells, _with_persistent_masks)
    _params(own_cells, lambda name, state: {f"module.{k}": v for k, v in state.items()})
    _add_cell(own_cells, NB02, "from course_lib.notebook import env\n"
                               "data_dir = env.ensure_data()\nprint(data_dir)", 3)
    _add_cell(own_cells, NB02, "plot_my_own_histogram(lengths)  # a name never defined")
    _saved_outputs(own_cells)  # then saved by an older Jupyter after a run
    _as_nbformat(own_cells, 4)
    (own_cells / NB03).rename(own_cells / "03_Span_Corruption.ipynb")
    other_code = student("-leading-dash", "an id with a leading dash", "span corruption drawn with torch",
                         "functional dropout in the synthesizer", "BOM and CRLF notebooks, CRLF predictions")
    _replace_answer(other_code, NB03, "03-span-corruption", SPAN_WITH_TORCH)
    _replace_answer(other_code, NB05, "05-synthesizer", SYNTH_FUNCTIONAL_DROPOUT)
    _windows_files(other_code)  # last: saved on Windows by another editor
    twins = student("--help", "an id that is an option", "the twins in other forms",
                    "names of 02 and 07 reused in 06 and 08", "torch defaults changed in 07-08", "os.chdir in 06",
                    "%%prun on an answer", "an answer cell split in JupyterLab", "a written answer split in JupyterLab",
                    "a %%writefile helper imported by the answer", "nbformat 4.0")
    for notebook, answers in ((NB07, TWINS_07), (NB08, TWINS_08)):
        for grade_id, source in answers.items():
            _replace_answer(twins, notebook, grade_id, source)
    _add_cell(twins, NB06, "import os\nfrom course_lib.notebook import env\n"
                           "from course_lib.data_files import read_birth_places\n"
                           "train = read_birth_places(env.ensure_data() / 'birth_places_train.tsv')\n"
                           "os.chdir(env.ensure_data())\nprint(len(train), open('birth_dev.tsv').readline())")
    _add_cell(twins, NB07, "import torch\ntorch.set_default_dtype(torch.float64)  # exact maths from here on")
    _add_cell(twins, NB08, "torch.set_grad_enabled(False)  # nothing is trained here\n"
                           "Q, K, V = (torch.randn(5, 4) for _ in range(3))  # the derivation's matrices, other sizes")
    _prefix_answer(twins, NB08, "08-b-code", "%%prun -q\n")
    _split(twins, NB02, "02-glue", "def finetune(")
    _split(twins, NB07, "07-a-i", "terms, so")
    _add_cell_after(twins, NB03, "03-given-2", "%%writefile span_helpers.py\n"
                                               "def kept_prefix(document, length):\n    return document[:length]")
    _prefix_answer(twins, NB03, "03-span-corruption", "from span_helpers import kept_prefix  # written above\n")
    _as_nbformat(twins, 0)
    own = student("extra_files_beside_the_work", "a scratch notebook", "Jupyter's checkpoints",
                  "checked names rebound after their test cells passed",
                  "a checked tensor changed in place after its test cell passed", "nbgrader submit's files",
                  "02 handed in only as a browser's (1) download")
    shutil.copy(own / "01_setup_and_tour.ipynb", own / "09_my_scratch.ipynb")
    (own / ".ipynb_checkpoints").mkdir()
    shutil.copy(REPO / "notebooks" / "a5" / NB03, own / ".ipynb_checkpoints" / "03_span_corruption-checkpoint.ipynb")
    _add_cell_after(own, NB07, "07-a-test", "q_copy = 0.01 * keys[2]  # a small query: what does it copy?\n"
                                            "print(attend(q_copy, keys, values))")
    _add_cell_after(own, NB07, "07-b-test", "q_avg *= 0.001  # the same average, as a small query\n"
                                            "print(attend(q_avg, keys, values))")
    _add_cell_after(own, NB08, "08-a-test", "P = torch.eye(T, dtype=DTYPE)  # no reordering at all\n"
                                            "print(torch.allclose(permuted_output(P, X), Z))")
    (own / "timestamp.txt").write_text("2026-11-20 09:30:00.000000 UTC")  # beside the notebooks
    (own / "submission_secret.txt").write_text("f2b7c4d0a9e1")
    (own / NB02).rename(own / "02_finetune_without_pretraining (1).ipynb")
    many = student("gathered_with_cp_al", "2,500 other files", "a byte-order mark and blank lines",
                   "run files at the top", "a hard-linked backup", "gathered with cp -al")
    for i in range(2500):  # a training loop's checkpoints beside the run files
        (many / "outputs" / f"checkpoint-{i:04d}.txt").write_text("x")
    predictions = many / "outputs" / PREDICTIONS
    predictions.write_bytes(b"\xef\xbb\xbf" + predictions.read_bytes() + b"\n\n")
    for path in (many / "outputs").iterdir():
        path.rename(many / path.name)
    (many / "outputs").rmdir()
    (many / "backup").mkdir()
    os.link(many / NB03, many / "backup" / NB03)
    # then linked, file by file, into another's folder
    subprocess.run(["cp", "-al", str(many.parent), str(submitted / "gathered_with_cp_al_too")], check=True)
    made["gathered_with_cp_al_too"] = submitted / "gathered_with_cp_al_too" / "a5"
    shapes["gathered_with_cp_al_too"] = ["linked from gathered_with_cp_al"]
    return shapes


@pytest.fixture(scope="module")
def course(tmp_path_factory, world_dir, world_answers, personal_smoke_runs):
    """A course folder (the solutions as source, the assignment generated) with the honest cohort submitted."""
    course = tmp_path_factory.mktemp("honest") / "course"
    shutil.copytree(SOLUTIONS, course / "solutions" / "a5")
    shutil.copy(REPO / "nbgrader_config.py", course / "nbgrader_config.py")
    grader_only = course / "grader_only"
    grader_only.mkdir(mode=0o700)
    answers = shutil.copy(world_answers, grader_only / "birth_test.tsv")
    env = dict(os.environ, PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
    done = subprocess.run([sys.executable, "-m", "nbgrader", "generate_assignment", "a5", "--force"], cwd=course,
                          env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    submitted = course / "submitted"

    def copy(student: str) -> Path:
        """The reference's notebooks, and its runs as this student trains them: with their own personal seed."""
        folder = submitted / student / "a5"
        shutil.copytree(SOLUTIONS, folder)
        shutil.copytree(personal_smoke_runs(student), folder / "outputs")
        return folder

    copy("reference")
    shapes = {"reference": ["the reference"], **_shapes(submitted, copy)}
    data = Path(shutil.copytree(world_dir, course / "data"))  # the course's data, as readable as an instructor's: the
    data.chmod(0o755)  # grading kernel reads it as nobody (a pytest folder is the owner's only)
    return dict(dir=course, answers=Path(answers), env=env, students=sorted(shapes), shapes=shapes, world=data)


def _notebooks(student_folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in student_folder.glob("*.ipynb")}


def _nbgraders_students(course) -> list[str]:
    """The students nbgrader's run can tell from the reference: other notebooks, an id of any kind, or nbgrader's
    own files (timestamp.txt) in the submission."""
    submitted = course["dir"] / "submitted"
    reference = _notebooks(submitted / "reference" / "a5")
    return [s for s in course["students"] if s == "reference" or not re.fullmatch(r"[a-z0-9_]+", s)
            or _notebooks(submitted / s / "a5") != reference or (submitted / s / "a5" / "timestamp.txt").exists()]


@pytest.fixture(scope="module")
def nbgrader_scores(course) -> dict[str, float]:
    """student -> nbgrader's autograded total, after `autograder autograde` on two workers (of the students whose
    notebooks, id or nbgrader files differ from the reference's)."""
    only = [f"--student={student}" for student in _nbgraders_students(course)]  # "--student=--help" is an id
    done = subprocess.run([sys.executable, "-m", "autograder", "autograde", "a5", "--workers", "2", "--preset", "smoke",
                           "--data-dir", str(course["world"]), *only], cwd=course["dir"], env=course["env"],
                          capture_output=True, text=True, timeout=1400)
    assert done.returncode == 0, done.stderr[-3000:]
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{course['dir'] / 'gradebook.db'}") as gb:
        return {s.student.id: sum(g.auto_score or 0 for nb in s.notebooks for g in nb.grades
                                  if not g.needs_manual_grade)
                for s in gb.find_assignment("a5").submissions}


@pytest.fixture(scope="module")
def graded(course, nbgrader_scores) -> dict:
    """The score of record on two workers, written into the course's gradebook too."""
    out = course["dir"] / "grades"
    code = main(["grade", str(course["dir"] / "submitted"), "--out", str(out), "--data-dir", str(course["world"]),
                 "--answers", str(course["answers"]), "--preset", "smoke", "--workers", "2", "--cell-timeout",
                 str(CELL_LIMIT), "--gradebook",
                 f"sqlite:///{course['dir'] / 'gradebook.db'}"])
    # the students nbgrader's run left out (it would add nothing) are not in the gradebook, so their trusted scores
    # cannot be written there: the summary names each as needing the instructor
    assert code == (1 if set(course["students"]) - set(nbgrader_scores) else 0)
    with open(out / "grades.csv", newline="", encoding="utf-8") as f:
        rows = {unescape_cell(r["student_id"]): r for r in csv.DictReader(f)}
    with open(out / "flags.csv", newline="", encoding="utf-8") as f:
        flags = list(csv.DictReader(f))
    return dict(rows=rows, reasons=json.loads((out / "reasons.json").read_text()), flags=flags)


def test_the_cohort_is_large_and_every_student_collected(course, graded):
    """Are there at least 25 honest shapes besides the reference, and does every student have a row (no id refused)?"""
    assert sum(len(shapes) for shapes in course["shapes"].values()) - 1 >= 25, course["shapes"]
    assert set(graded["rows"]) == set(course["students"])


def test_every_honest_student_gets_the_references_score_of_record(course, graded):
    """Does every honest shape get every point of the score of record, the reference's score?"""
    reference = float(graded["rows"]["reference"]["score"])
    assert reference == float(graded["rows"]["reference"]["max_score"])
    lost = {(s, *course["shapes"][s]): [p for p in graded["reasons"][s] if p["points"] < p["max_points"]]
            for s, row in graded["rows"].items() if float(row["score"]) != reference}
    assert not lost, lost


def test_every_honest_student_gets_the_references_score_in_nbgrader(course, nbgrader_scores):
    """Does nbgrader, in the grading kernel, give every honest shape of notebooks or ids the reference's autograded
    score?"""
    assert set(nbgrader_scores) == set(_nbgraders_students(course))
    assert len(nbgrader_scores) >= 6, sorted(nbgrader_scores)
    reference = nbgrader_scores["reference"]
    assert {(s, *course["shapes"][s]): v for s, v in nbgrader_scores.items() if v != reference} == {}


def test_shared_hard_links_are_flagged_not_zeroed(graded):
    """Are the two students gathered with cp -al flagged for sharing files, and both at full marks?"""
    pairs = {(f["student"], f["other_student"], f["why"]) for f in graded["flags"]}
    assert ("gathered_with_cp_al", "gathered_with_cp_al_too",
            "the same file (a hard link) in both submissions") in pairs


def test_honest_students_with_their_own_seeds_are_never_flagged_for_their_runs(graded):
    """Is no honest student who trained with their personal seed flagged for a run (a shared run file, a near-copy,
    a classmate's seed, a run above the ceiling), but for the two whose files are one through cp -al? (Their
    notebooks are all the solution's, and flagged as such.)"""
    linked = {"gathered_with_cp_al", "gathered_with_cp_al_too"}
    runs = [f for f in graded["flags"] if not f["file"].endswith(".ipynb")]
    assert runs and [f for f in runs if {unescape_cell(f["student"]), unescape_cell(f["other_student"])} != linked] \
        == []


def test_nbgraders_export_is_the_score_of_record_runs_included(course, graded):
    """After `autograder grade --gradebook`, does `nbgrader export` (the file for the LMS) give every honest student
    the score of record, the runs' points in their run cells included, out of that and the written parts' points?"""
    done = subprocess.run([sys.executable, "-m", "nbgrader", "export"], cwd=course["dir"], env=course["env"],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    with open(course["dir"] / "grades.csv", newline="", encoding="utf-8") as f:
        exported = {unescape_cell(r["student_id"]): r for r in csv.DictReader(f)}  # (an id like -dash escaped)
    assert set(exported) == set(_nbgraders_students(course))  # the gradebook's students: those nbgrader autograded
    by_hand = float(exported["reference"]["max_score"]) - float(graded["rows"]["reference"]["max_score"])
    assert by_hand > 0  # the written answers, graded in formgrader: 0 of them until then
    assert {s: float(r["raw_score"]) for s, r in exported.items()} == \
        {s: float(graded["rows"][s]["score"]) for s in exported}
