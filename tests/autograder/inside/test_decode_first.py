"""The decode run first in the probe job: out of the students' reach, within its own time limit."""
from __future__ import annotations

from pathlib import Path

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

from autograder import confinement
from autograder.confinement.jobs import JobResult, run_job
from autograder.grading.results import settings_for
from autograder.grading.run_parts import FIRST_PROBLEMS, SYNTHESIZER_REFERENCE, DecodeFirst, decoded_first
from autograder.inside import wire
from autograder.inside.decode_first import PROBLEMS
from course_lib.presets import get_preset

pytestmark = [pytest.mark.skipif(confinement.status() is not None, reason=f"no confinement: {confinement.status()}"),
              pytest.mark.timeout(300)]

MARKER = "decode-secret-5e1f"  # put in the reference's text: a student's cell must never come across it
# a student's cell looking for the decode everywhere it could (the job's folder, the scratch, the reference's module
# or classes in this process, every other process's command line, environment and memory), printing what it found
# to the instructor's log; then writing a forged answer into every descriptor it has (its own answer too)
SEARCH = f"""import gc, os, sys
marker = {MARKER[:7]!r} + {MARKER[7:]!r}
found = []
for top in ('/job', '/tmp', os.getcwd()):
    for root, dirs, files in os.walk(top):
        for name in files:
            try:
                if marker in open(os.path.join(root, name), errors='ignore').read():
                    found.append(os.path.join(root, name))
            except OSError:
                pass
found += [name for name in sys.modules if 'synthesizer' in name]
found += [o.__name__ for o in gc.get_objects() if isinstance(o, type) and o.__name__ == 'SynthesizerAttention']
for pid in os.listdir('/proc'):
    if pid.isdigit() and int(pid) != os.getpid():
        for what in ('cmdline', 'environ', 'mem'):
            try:
                if marker in open(f'/proc/{{pid}}/{{what}}', 'rb').read(10 ** 6).decode(errors='ignore'):
                    found.append(what)
            except OSError:
                pass
print('SEARCHED:', ','.join(found) or 'nothing', flush=True)
for fd in range(3, 64):
    try:
        os.write(fd, b'{{"answer": {{"forged": true}}}}')
    except OSError:
        pass
"""

def _job(tmp_path: Path, world_dir: Path, seconds: float, leaked: bool = False, width: int | None = None) -> JobResult:
    """A probe job of one notebook (SEARCH) whose decode, run first, has no params to decode (parts=[]); with
    ``leaked`` the marked reference lies in the job's folder too (the search's control); with ``width`` the decode
    builds one model that wide (its params are never reached)."""
    notebook = tmp_path / "07_probe.ipynb"
    nbformat.write(new_notebook(cells=[new_code_cell(SEARCH)]), notebook)
    reference = nbformat.read(SYNTHESIZER_REFERENCE, as_version=4)
    reference.cells.append(new_markdown_cell(MARKER))
    preset = get_preset("smoke")
    first = {"wiki": "data/wiki.txt", "block_size": preset.block_size, "model": dict(preset.model),
             "batch_size": preset.eval_batch_size, "parts": [],
             "synthesizer_reference_text": nbformat.writes(reference)}
    if width is not None:
        first["model"]["n_embd"] = width
        first["parts"] = [{"name": "vanilla", "attention": "vanilla", "params": "/job/none.params", "questions": {}}]
    request = {"notebooks": [notebook.name], "checks": [{"grade_id": "g", "notebook": "07_probe", "needs": ["result"],
                                                        "probe": "variables", "inputs": {"names": ["result"]}}]}
    files = {notebook.name: notebook, "data/wiki.txt": world_dir / "wiki.txt"}
    if leaked:
        nbformat.write(reference, tmp_path / "reference.ipynb")
        files["reference.ipynb"] = tmp_path / "reference.ipynb"
    return run_job("probe", request, files, timeout=120, first=(wire.dumps(first), seconds))


def test_a_students_cells_find_nothing_of_the_decode_and_cannot_change_its_answer(tmp_path, world_dir):
    """Does the decode answer before the notebooks run, while a cell that searches files, memory and every process
    for the synthesizer reference it read finds nothing, and writing into every descriptor forges nothing?"""
    job = _job(tmp_path, world_dir, seconds=60)
    assert "SEARCHED: nothing" in job.log, job.log[-3000:]
    assert wire.loads(job.first) == {"answer": {}}  # its own answer is forged: the student's self-harm only
    assert job.log.index("[grader] decode, run first") < job.log.index("07_probe.ipynb: run and checked")
    control = _job(tmp_path, world_dir, seconds=60, leaked=True)  # the search finds the reference where it lies
    assert "SEARCHED: /job/reference.ipynb," in control.log, control.log[-3000:]


def test_a_decode_past_its_time_limit_is_stopped_and_the_notebooks_still_run(tmp_path, world_dir):
    """Is a decode that outlasts its limit killed, said in the grader's words, and the probe still answered?"""
    job = _job(tmp_path, world_dir, seconds=0.05)
    assert "SEARCHED: nothing" in job.log, job.log[-3000:]
    first = DecodeFirst(b"", {}, 0.05)
    decoded = decoded_first(job, first, settings_for(world_dir, world_dir / "x", "synthetic", "smoke"), [])
    assert decoded.answer is None and decoded.problem == "ran past the time limit of 0 s and was stopped"


def test_a_decode_that_runs_out_of_memory_is_said_and_the_notebooks_still_run(tmp_path, world_dir):
    """Is a decode whose model outgrows the job's memory stopped with the grader's memory reason, while the probe
    still runs and checks the notebooks?"""
    job = _job(tmp_path, world_dir, seconds=60, width=2 ** 15)  # its first block alone is 16 GB of float32
    # (the search's forged writes spoil the probe's own answer: the student's self-harm, as above)
    assert "SEARCHED: nothing" in job.log and "07_probe.ipynb: run and checked" in job.log, job.log[-3000:]
    settings = settings_for(world_dir, world_dir / "x", "synthetic", "smoke")
    decoded = decoded_first(job, DecodeFirst(b"", {}, 60), settings, [])
    assert decoded.answer is None
    assert decoded.problem == f"ran out of memory (the limit is {settings.limits.memory_mb} MB) and was stopped"


@pytest.mark.parametrize("sent, said", [
    ({"problem": "memory"}, "ran out of memory (the limit is {memory} MB) and was stopped"),
    ({"problem": "stopped"}, "stopped before answering"),
    ({"problem": "something else"}, "the probe job's own problem"),
    ({"answer": "not a dict"}, "the probe job's own problem"),
])
def test_what_the_decode_sent_becomes_the_graders_own_words(world_dir, sent, said):
    """Does each problem word the decode can send become the grader's reason, and anything else the job's own?"""
    assert set(PROBLEMS) == set(FIRST_PROBLEMS)
    settings = settings_for(world_dir, world_dir / "x", "synthetic", "smoke")
    job = JobResult({}, "the probe job's own problem", "", 1.0, wire.dumps(sent))
    decoded = decoded_first(job, DecodeFirst(b"", {}, 60), settings, [])
    assert decoded.answer is None and decoded.problem == said.format(memory=settings.limits.memory_mb)
