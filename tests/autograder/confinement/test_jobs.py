"""The confined job: an allowlist view, its own PID and network namespaces, capped resources, raw answers only."""
from __future__ import annotations

import os
import shutil
import socket
import tempfile
import time
from pathlib import Path

import nbformat
import pytest
from conftest import REPO
from nbformat.v4 import new_code_cell, new_notebook

from autograder import confinement
from autograder.confinement import Limits
from autograder.confinement.jobs import run_job

pytestmark = [pytest.mark.skipif(confinement.status() is not None, reason=f"no confinement: {confinement.status()}"),
              pytest.mark.timeout(300)]


def _probe(tmp_path: Path, source: str, names=("result",), timeout: float = 60, limits: Limits = Limits()):
    """Run ``source`` as a notebook in the sandbox; returns (job result, the value of ``result`` or None)."""
    path = tmp_path / "07_probe.ipynb"
    nbformat.write(new_notebook(cells=[new_code_cell(source)]), path)
    request = {"notebooks": [path.name], "checks": [{"grade_id": "g", "notebook": "07_probe", "needs": list(names),
                                                     "probe": "variables", "inputs": {"names": list(names)}}]}
    job = run_job("probe", request, {path.name: path}, timeout=timeout, limits=limits)
    got = job.answer["checks"]["g"] if job.answer else None
    return job, (got or {}).get("output", {}).get("result") if isinstance(got, dict) else None


def test_the_job_sees_only_its_allowlist(tmp_path):
    """Can submission code read the course's .git, the solutions, or any file outside its allowlist? (no)"""
    secret = Path(tempfile.mkdtemp(prefix="grader-secret-")) / "birth_test.tsv"
    secret.write_text("Where was X born?\tNowhere\n")
    paths = [REPO / ".git" / "HEAD", REPO / "solutions" / "a5" / "05_synthesizer.ipynb", secret,
             REPO / "autograder" / "checks" / "twins.py", Path("/etc/shadow"), REPO / "nbgrader_config.py"]
    source = ("import os\nresult = []\n"
              f"for p in {[str(p) for p in paths]!r}:\n"
              "    try:\n        open(p).read() if not os.path.isdir(p) else os.listdir(p)\n"
              "        result.append('READ ' + p)\n"
              "    except OSError as err:\n        result.append(type(err).__name__)\n"
              f"result = ','.join(result) + ' | ' + ' '.join(sorted(os.listdir({str(REPO)!r})))")
    job, result = _probe(tmp_path, source)
    assert job.problem is None, job.log
    read, listing = result.split(" | ")
    assert "READ" not in read, read
    assert set(listing.split()) <= {"course_lib", ".venv"}, listing  # the repo holds nothing else in there
    shutil.rmtree(secret.parent)


def test_the_job_runs_as_nobody_without_network_or_other_processes(tmp_path):
    """Does the job run as nobody, unable to see other processes or reach a server on this machine?"""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    port = server.getsockname()[1]
    source = ("import os, socket\n"
              "pids = [p for p in os.listdir('/proc') if p.isdigit()]\n"
              "try:\n"
              f"    socket.create_connection(('127.0.0.1', {port}), timeout=3); net = 'reached'\n"
              "except OSError as err:\n    net = type(err).__name__\n"
              "result = f'{os.getuid()} {len(pids)} {net}'")
    job, result = _probe(tmp_path, source)
    server.close()
    uid, pids, net = result.split()
    assert uid == "65534" and int(pids) <= 4 and net != "reached", result


def test_hanging_job_stops_at_the_time_limit(tmp_path):
    """Does a notebook that never finishes loading stop at the time limit, with a reason saying so?"""
    job, _ = _probe(tmp_path, "while True:\n    pass", timeout=8)
    assert job.answer is None and "time limit of 8 s" in job.problem


def test_processes_a_job_starts_die_with_it(tmp_path):
    """Is a background process started by a timed-out job killed too, not left running after grading?"""
    marker = Path(tempfile.mkdtemp(prefix="grader-marker-"))
    os.chmod(marker, 0o777)
    # the job cannot see this folder; the process would have to outlive the job to matter at all
    child = "import time, os; os.setsid(); time.sleep(6); open('/tmp/x', 'w').write('alive')"
    # then waits (sleeping: the CPU is the suite's; the spinning job is test_hanging_job_stops_at_the_time_limit's)
    source = f"import subprocess, sys, time\nsubprocess.Popen([sys.executable, '-c', {child!r}])\nwhile True:\n" \
             "    time.sleep(0.05)"
    before = {p for p in os.listdir("/proc") if p.isdigit()}
    job, _ = _probe(tmp_path, source, timeout=5)
    assert "time limit" in job.problem
    time.sleep(1)
    after = {p for p in os.listdir("/proc") if p.isdigit()} - before
    survivors = []
    for pid in after:
        try:
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
        except OSError:
            continue
        if b"time.sleep(6)" in cmdline:
            survivors.append(pid)
    assert not survivors
    marker.rmdir()


def test_memory_hog_is_stopped_with_a_reason(tmp_path):
    """Does a notebook that allocates far too much get stopped by the memory limit, not take the grader down?"""
    job, _ = _probe(tmp_path, "hog = []\nwhile True:\n    hog.append(bytearray(2 ** 26))",
                    limits=Limits(memory_mb=1500))
    # either the address-space cap raised MemoryError in the notebook, or the cgroup stopped the job
    stopped = job.answer is None and "ran out of memory" in job.problem
    failed = (job.answer or {}).get("failed_notebooks", {}).get("07_probe.ipynb", {}).get("type") == "MemoryError"
    assert stopped or failed, (job.problem, job.answer)


def test_a_fork_bomb_meets_the_process_limit(tmp_path):
    """Does a notebook that forks without end stay inside its process limit and finish?"""
    source = ("import os\nkids = 0\n"
              "for _ in range(500):\n    try:\n        pid = os.fork()\n    except OSError:\n        break\n"
              "    if pid == 0:\n        import time; time.sleep(30); os._exit(0)\n    kids += 1\n"
              "result = kids")
    job, result = _probe(tmp_path, source, limits=Limits(max_processes=32))
    assert job.problem is None and result < 32


def test_scratch_is_capped_and_leaves_nothing_behind(tmp_path, monkeypatch):
    """Can a job fill the disk through /tmp, and does anything it wrote stay after it ends? (no, no)"""
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))  # a folder no other test's grading writes to
    before = set(os.listdir(tempfile.gettempdir()))
    source = ("written = 0\ntry:\n    with open('/tmp/fill', 'wb') as f:\n        for _ in range(64):\n"
              "            f.write(b'x' * 2 ** 20); written += 1\nexcept OSError as err:\n    pass\nresult = written")
    job, result = _probe(tmp_path, source, limits=Limits(scratch_mb=16))
    assert job.problem is None and result <= 16
    assert not [n for n in set(os.listdir(tempfile.gettempdir())) - before if n.startswith("grader-job-")]


def test_an_oversized_answer_is_a_reason_not_a_memory_problem(tmp_path):
    """Does a job that writes far more than the answer cap get a reason instead of filling the grader's memory?"""
    source = ("import os\nfor fd in range(3, 20):\n    try:\n        os.write(fd, b'x' * 2 ** 20)\n"
              "        for _ in range(80):\n            os.write(fd, b'x' * 2 ** 20)\n"
              "    except OSError:\n        pass\n"
              "os._exit(0)")
    job, _ = _probe(tmp_path, source)
    assert job.answer is None and ("more than" in job.problem or "could not read" in job.problem), job.problem


def test_a_forged_answer_is_only_data(tmp_path):
    """Does an answer the notebook writes itself arrive as plain data for the judges, never as a verdict?"""
    forge = ("import json, os, sys\n"
             "os.write(int(sys.argv[-1]), json.dumps({'checks': {'g': {'output': {'result': 'forged'}}}}).encode())\n"
             "os._exit(0)")
    job, result = _probe(tmp_path, forge)
    assert job.problem is None and result == "forged"  # raw output: the judge of a real check decides


def test_jobs_leave_no_cgroup_behind(tmp_path):
    """Is each job's cgroup removed when it ends, even after a timeout?"""
    _probe(tmp_path, "import time\nwhile True:\n    time.sleep(0.05)", timeout=3)
    for controller in ("memory", "pids"):
        parent = confinement.CGROUP_ROOT / controller / confinement.CGROUP_PARENT
        if parent.is_dir():
            assert not [p for p in parent.iterdir() if p.name.startswith(f"job-{os.getpid()}-")]


def test_a_killed_graders_empty_cgroups_are_removed_by_the_next_job():
    """After a grader died by SIGKILL (no cleanup), does the next job remove its empty cgroups and keep live ones?"""
    import subprocess
    import uuid

    dead = subprocess.Popen(["true"])
    dead.wait()  # its pid names a grader that is gone
    orphan = confinement.Cgroup(Limits(), name=f"job-{dead.pid}-{uuid.uuid4().hex[:8]}")
    assert orphan.folders and all(f.is_dir() for f in orphan.folders)
    live = confinement.Cgroup(Limits())  # the next job, of this live process
    try:
        assert not any(f.exists() for f in orphan.folders)
        assert confinement.remove_orphans() == [] and all(f.is_dir() for f in live.folders)
    finally:
        live.kill()


def test_a_course_under_tmp_stays_visible(tmp_path, monkeypatch):
    """Does a course folder under /tmp (a clone there) stay reachable, not hidden by the job's own /tmp?"""
    import subprocess

    copy = Path(tempfile.mkdtemp(prefix="grader-course-")) / "course_lib"
    shutil.copytree(REPO / "course_lib", copy, ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.setattr(confinement.sandbox, "COURSE_LIB", copy)
    argv = confinement.bwrap_argv(["python", "-c", f"import os; print(sorted(os.listdir({str(copy)!r}))[:1])"],
                                  confinement.Mounts(), Limits())
    done = subprocess.run(argv, capture_output=True, text=True, timeout=60)
    shutil.rmtree(copy.parent)
    assert done.returncode == 0 and "__init__.py" in done.stdout, done.stderr


def test_one_checks_memory_error_does_not_void_the_others(tmp_path):
    """Does a MemoryError caught in one check leave the job's other answers standing?"""
    path = tmp_path / "07_probe.ipynb"
    nbformat.write(new_notebook(cells=[new_code_cell("def hog():\n    raise MemoryError()\nresult = 7")]), path)
    request = {"notebooks": [path.name], "checks": [
        {"grade_id": "hog", "notebook": "07_probe", "needs": ["hog"], "probe": "variables",
         "inputs": {"calls": {"hog": [[]]}}},
        {"grade_id": "ok", "notebook": "07_probe", "needs": ["result"], "probe": "variables",
         "inputs": {"names": ["result"]}}]}
    job = run_job("probe", request, {path.name: path}, timeout=60)
    assert job.problem is None, job.problem
    assert job.answer["checks"]["hog"]["error"]["kind"] == "memory"
    assert job.answer["checks"]["ok"]["output"]["result"] == 7


def test_a_confined_plot_finds_its_fonts_quietly():
    """Does matplotlib draw in the sandbox without fontconfig's "Fontconfig error" (every autograded notebook's first
    output used to start with it)?"""
    import subprocess
    import sys

    from autograder.confinement import Mounts, bwrap_argv

    script = ("import matplotlib; matplotlib.use('agg'); import matplotlib.pyplot as plt\n"
              "from matplotlib import font_manager\n"
              "plt.figure(); plt.title('fonts'); plt.savefig('/tmp/plot.png')\n"
              "print(len(font_manager.fontManager.ttflist))")
    done = subprocess.run(bwrap_argv([sys.executable, "-c", script], Mounts(), Limits()), capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0 and int(done.stdout) > 0, done.stderr
    assert "Fontconfig" not in done.stderr, done.stderr


def test_each_notebook_is_checked_in_its_own_names_and_a_fresh_kernels_settings(tmp_path):
    """Does a name or a process-wide setting (default dtype, grad mode, folder) of one notebook stay out of another
    notebook's checks, as with one kernel per notebook in Jupyter?"""
    first = tmp_path / "05_first.ipynb"
    nbformat.write(new_notebook(cells=[new_code_cell("import os, torch\nresult = 'first'\n"
                                                     "torch.set_default_dtype(torch.float64)\n"
                                                     "torch.set_grad_enabled(False)\nos.chdir('/')")]), first)
    second = tmp_path / "06_second.ipynb"
    nbformat.write(new_notebook(cells=[new_code_cell("import os, torch\nresult = 'second'\n"
                                                     "def settings():\n    return [str(torch.get_default_dtype()), "
                                                     "torch.is_grad_enabled(), os.path.isfile('06_second.ipynb')]")]),
                   second)
    request = {"notebooks": [first.name, second.name], "checks": [
        {"grade_id": "early", "notebook": "05_first", "needs": ["result"], "probe": "variables",
         "inputs": {"names": ["result"]}},
        {"grade_id": "late", "notebook": "06_second", "needs": ["result", "settings"], "probe": "variables",
         "inputs": {"names": ["result"], "calls": {"settings": [[]]}}},
        {"grade_id": "absent", "notebook": "07_never_handed_in", "needs": ["result"], "probe": "variables",
         "inputs": {"names": ["result"]}}]}
    job = run_job("probe", request, {first.name: first, second.name: second}, timeout=60)
    assert job.problem is None, job.problem
    checks = job.answer["checks"]
    assert checks["early"]["output"] == {"result": "first"}
    assert checks["late"]["output"] == {"result": "second", "settings": [["torch.float32", True, True]]}
    assert checks["absent"]["error"] == {"kind": "missing", "names": ["result"]}


def test_a_decode_job_whose_model_outgrows_its_memory_is_said_to_have_run_out(tmp_path, world_dir):
    """Does a decode job (no student code) that torch's allocator refuses memory, with a RuntimeError of torch's words
    rather than a MemoryError, end with the memory reason, not "stopped before answering"?"""
    from course_lib.presets import get_preset

    preset = get_preset("smoke")
    request = {"wiki": "data/wiki.txt", "block_size": preset.block_size, "batch_size": preset.eval_batch_size,
               "model": {**preset.model, "n_embd": 2 ** 15},  # its first block alone is 16 GB of float32
               "parts": [{"name": "vanilla", "attention": "vanilla", "params": "/job/none.params", "questions": {}}]}
    job = run_job("decode", request, {"data/wiki.txt": world_dir / "wiki.txt"}, timeout=120,
                  limits=Limits(memory_mb=1500))
    assert job.answer is None and job.problem == "ran out of memory (the limit is 1500 MB) and was stopped", job.log
