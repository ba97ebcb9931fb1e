"""Jobs started from the class-wide template: the same sandbox bubblewrap gives a job of its own, and a way back."""
from __future__ import annotations

import fcntl
import json
import os
import re
import shutil
import signal
import socket
import tempfile
import threading
import time
from pathlib import Path

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_notebook

from autograder import confinement
from autograder.confinement import template, template_server
from autograder.confinement.jobs import JobResult, run_job

pytestmark = [pytest.mark.skipif(confinement.status() is not None or not template.wanted(),
                                 reason=f"no confinement as root: {confinement.status() or 'not root'}"),
              pytest.mark.timeout(300)]

# what a job's process sees of itself and its sandbox; ``preloaded`` says which way it was started
SEEN = """import ctypes, json, os, socket, sys
preloaded = 'torch' in sys.modules and 'torch._dynamo' in sys.modules
import torch._dynamo  # as a training step does: the environment it sets is then there either way
lines = open('/proc/self/status').read().splitlines()
status = dict(line.split(':\\t', 1) for line in lines if ':\\t' in line)
others = sorted(int(p) for p in os.listdir('/proc') if p.isdigit() and int(p) != os.getpid())
result = json.dumps({
    'ids': [os.getresuid(), os.getresgid(), os.getgroups()],
    'caps': [status[k].strip() for k in ('CapInh', 'CapPrm', 'CapEff', 'CapBnd', 'CapAmb')],
    'no_new_privs': status['NoNewPrivs'].strip(), 'seccomp': status['Seccomp'].strip(),
    'host': socket.gethostname(), 'cwd': os.getcwd(), 'umask': os.umask(0o22),
    'env': dict(os.environ), 'argv': sys.argv, 'flags': list(sys.flags), 'path': sys.path,
    'fds': sorted(os.listdir('/proc/self/fd')), 'stdin': os.readlink('/proc/self/fd/0'),
    'mounts': [line.split()[3:5] for line in open('/proc/self/mountinfo')],
    'cgroups': open('/proc/self/cgroup').read().split(), 'limits': open('/proc/self/limits').read(),
    'tty': os.path.exists('/dev/tty') and os.isatty(0),
    'others': [open(f'/proc/{p}/comm').read().strip() for p in others],
    'dumpable': ctypes.CDLL(None).prctl(3, 0, 0, 0, 0), 'owner': os.stat('/proc/self/oom_score_adj').st_uid,
    'preloaded': preloaded,
})
"""


def _cell_job(tmp_path: Path, code: str, **kwargs) -> JobResult:
    """A probe job of one notebook whose one cell is ``code``, its check reading the cell's ``result``."""
    notebook = tmp_path / "07_probe.ipynb"
    nbformat.write(new_notebook(cells=[new_code_cell(code)]), notebook)
    request = {"notebooks": [notebook.name], "checks": [{"grade_id": "g", "notebook": "07_probe", "needs": ["result"],
                                                        "probe": "variables", "inputs": {"names": ["result"]}}]}
    return run_job("probe", request, {notebook.name: notebook}, timeout=120, **kwargs)


def _seen(tmp_path: Path, monkeypatch, fresh: bool) -> dict:
    """What a probe job's cell sees, the job started fresh (``fresh``) or from the template."""
    monkeypatch.setenv(template.FRESH_VARIABLE, "1" if fresh else "0")
    job = _cell_job(tmp_path, SEEN, env={"COURSE_PRESET": "smoke"})
    assert job.problem is None, job.log[-3000:]
    assert ("starts its own interpreter" in job.log) is False, job.log[-3000:]
    seen = job.answer["checks"]["g"]["output"]["result"]
    return json.loads(re.sub(r"(grader-job|notebooks)-[a-z0-9_]+", r"\1-X", seen))  # each job's own folders' names


def test_a_job_from_the_template_sees_the_sandbox_bubblewrap_gives_a_job_of_its_own(tmp_path, monkeypatch):
    """Are a template job's ids, capabilities, no_new_privs, dumpable flag (its /proc files its own), hostname,
    working folder, umask, environment, argv, interpreter flags, import path, descriptors, mounts, cgroups and rlimits
    those of a job bubblewrap started itself (no terminal either way), with torch preloaded and, beside bubblewrap's
    init, only the holder to see?"""
    fresh = _seen(tmp_path, monkeypatch, fresh=True)
    warm = _seen(tmp_path, monkeypatch, fresh=False)
    assert (fresh.pop("preloaded"), warm.pop("preloaded")) == (False, True)
    assert fresh.pop("others") == ["bwrap"] and warm.pop("others") == ["bwrap", "sh"]
    assert warm == fresh, {key: (fresh[key], warm[key]) for key in fresh if fresh[key] != warm.get(key)}
    assert fresh["ids"] == [[65534] * 3, [65534] * 3, []] and set(fresh["caps"]) == {"0000000000000000"}


def test_a_template_that_cannot_start_leaves_the_job_to_its_own_interpreter(tmp_path, monkeypatch):
    """When the template cannot start, does the job still run and answer, on an interpreter of its own, and does
    its log say why?"""
    broken = tmp_path / "template_server.py"
    broken.write_text("raise SystemExit(3)\n")
    monkeypatch.setattr(template, "SERVER", broken)
    monkeypatch.setattr(template, "ROOT", tmp_path / "templates")
    monkeypatch.setenv(template.FRESH_VARIABLE, "0")
    job = _cell_job(tmp_path, "import sys\nresult = 'torch' in sys.modules")
    assert job.problem is None, job.log[-3000:]
    assert "[grader] the job starts its own interpreter: the template did not start" in job.log
    assert job.answer["checks"]["g"]["output"]["result"] is True  # the probe imports torch itself


@pytest.mark.skipif(not Path("/sys/fs/cgroup/cpuacct/cgroup.procs").exists(), reason="no cgroup v1 cpuacct hierarchy")
def test_a_template_jobs_cpu_is_counted_where_the_grader_that_asked_for_it_is_counted(tmp_path, monkeypatch):
    """Does a job from the template join the cgroups its holder is in, so that the cpuacct group measuring a grading
    step counts the job's CPU, as it counts a job bubblewrap started itself?"""
    monkeypatch.setenv(template.FRESH_VARIABLE, "0")
    burn = "import time\nend = time.process_time() + 1.5\nwhile time.process_time() < end:\n    pass\nresult = 1"
    hierarchy = Path("/sys/fs/cgroup/cpuacct")
    mine = next(line.split(":", 2)[2] for line in Path("/proc/self/cgroup").read_text().splitlines()
                if line.split(":")[1] == "cpuacct")
    group = hierarchy / mine.lstrip("/") / f"template-test-{os.getpid()}"
    run_job("probe", {"notebooks": [], "checks": []}, {}, timeout=120)  # the template is up, outside the group
    group.mkdir()
    try:
        (group / "cgroup.procs").write_text(str(os.getpid()))
        try:
            before = int((group / "cpuacct.usage").read_text())
            job = _cell_job(tmp_path, burn)
            used = (int((group / "cpuacct.usage").read_text()) - before) / 1e9
        finally:
            (hierarchy / mine.lstrip("/") / "cgroup.procs").write_text(str(os.getpid()))
    finally:
        for _ in range(100):
            try:
                group.rmdir()
                break
            except OSError:
                time.sleep(0.05)
    assert job.problem is None and "starts its own interpreter" not in job.log, job.log[-3000:]
    assert used >= 1.5, used


def _templates(root: Path) -> set[int]:
    """The pids of the running templates whose socket is in ``root`` (not the children they forked, which share
    their command line)."""
    found = set()
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            command = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        server, sock = (command[2], command[3]) if len(command) > 3 else (b"", b"")
        if server == str(template.SERVER).encode() and Path(sock.decode()).parent == root:
            found.add(int(pid))
    return {pid for pid in found if (parent := _parent(pid)) is not None and parent not in found}


def _parent(pid: int) -> int | None:
    """The parent's pid (None: the process ended)."""
    try:
        return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
    except OSError:
        return None


def test_a_template_killed_while_its_job_runs_leaves_the_job_to_finish_and_the_next_job_starts_another(tmp_path,
                                                                                                      monkeypatch):
    """When the template dies in the middle of a job, does the job still finish and answer, and does the next job
    start a template anew?"""
    # a template of this test's own: a short socket path, not under /tmp (the template has a /tmp of its own)
    root = Path(tempfile.mkdtemp(prefix="tpl-", dir="/run"))
    monkeypatch.setattr(template, "ROOT", root)
    monkeypatch.setenv(template.FRESH_VARIABLE, "0")
    sleeps = "import time\ntime.sleep(4)\nresult = 7"
    run_job("probe", {"notebooks": [], "checks": []}, {}, timeout=120)
    assert len(_templates(root)) == 1
    killed = threading.Timer(2, _kill, args=(_templates(root),))
    killed.start()
    job = _cell_job(tmp_path, sleeps)
    killed.join()
    assert job.problem is None and job.answer["checks"]["g"]["output"]["result"] == 7, job.log[-3000:]
    assert "starts its own interpreter" not in job.log and not _templates(root)
    again = _cell_job(tmp_path, sleeps)
    assert again.problem is None and "starts its own interpreter" not in again.log, again.log[-3000:]
    assert len(_templates(root)) == 1
    _kill(_templates(root))
    shutil.rmtree(root)


def _kill(pids: set[int]) -> None:
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def test_the_template_reads_nothing_left_in_the_hosts_tmp(monkeypatch):
    """Does the template run on a /tmp of its own (the sandboxes' HOME and MPLCONFIGDIR), so that nothing anyone left
    in the host's /tmp (a user site folder, a matplotlibrc) reaches its imports as root, while a checkout that lives
    under /tmp still finds its own files there?"""
    left = Path(tempfile.mkdtemp(prefix="left-by-someone-", dir="/tmp"))
    checkout = Path(tempfile.mkdtemp(prefix="checkout-", dir="/tmp"))  # as a CI clone may be
    shutil.copy(template.SERVER, checkout / template.SERVER.name)
    monkeypatch.setattr(template, "SERVER", checkout / template.SERVER.name)
    root = Path(tempfile.mkdtemp(prefix="tpl-", dir="/run"))
    monkeypatch.setattr(template, "ROOT", root)
    try:
        template.ensure(template.sandbox_environment(confinement.bwrap_argv(["true"], confinement.Mounts(),
                                                                           confinement.Limits())))
        (pid,) = _templates(root)
        mounts = [line.split() for line in Path(f"/proc/{pid}/mountinfo").read_text().splitlines()]
        assert any(m[4] == "/tmp" and m[m.index("-") + 1] == "tmpfs" for m in mounts), mounts
        assert left.is_dir() and not Path(f"/proc/{pid}/root{left}").exists()
        assert Path(f"/proc/{pid}/root{checkout}").samefile(checkout)  # bound back: the same folder
        assert Path(f"/proc/{pid}/root/run").samefile("/run")  # its socket's folder is the host's
    finally:
        _kill(_templates(root))
        shutil.rmtree(root)
        shutil.rmtree(checkout)
        left.rmdir()


def test_a_job_that_signals_everything_it_may_still_answers(tmp_path, monkeypatch):
    """Does a job whose code sends SIGKILL to every process it may (kill -1) still answer, from the template as from
    an interpreter of its own: the holder it cannot signal, so its sandbox does not end under it?"""
    code = ("import os, signal\ntry:\n    os.kill(-1, signal.SIGKILL)\n"
            "except ProcessLookupError:  # nothing it may signal\n    pass\nresult = 7")
    for fresh in ("1", "0"):
        monkeypatch.setenv(template.FRESH_VARIABLE, fresh)
        job = _cell_job(tmp_path, code)
        answer = job.answer["checks"]["g"].get("output", {}) if job.answer else {}
        assert job.problem is None and answer.get("result") == 7, (fresh, job.log[-3000:])
        assert "starts its own interpreter" not in job.log, job.log[-3000:]


def test_a_template_jobs_collections_skip_the_preload_and_still_collect_its_own(tmp_path, monkeypatch):
    """Are the objects the template preloaded out of a job's garbage collections (frozen, so no collection walks or
    copies them), while a cycle the job's own code leaves is still collected, as in a job with an interpreter of its
    own?"""
    # A weak reference tells whether the cycle itself was freed: gc.collect()'s count also holds whatever else was
    # garbage, and on Python 3.11 a plain instance's attributes need no __dict__ object, so the cycle alone may count 1.
    code = ("import gc, weakref\ngc.disable()\nclass Node:\n    pass\nnode = Node()\nnode.me = node\n"
            "ref = weakref.ref(node)\ndel node\nkept = ref() is not None\ncollected = gc.collect()\n"
            "result = [gc.get_freeze_count(), kept, ref() is None, collected]\ngc.enable()")
    seen = {}
    for fresh in ("1", "0"):
        monkeypatch.setenv(template.FRESH_VARIABLE, fresh)
        job = _cell_job(tmp_path, code)
        assert job.problem is None, job.log[-3000:]
        seen[fresh] = job.answer["checks"]["g"]["output"]["result"]
    assert seen["1"][0] == 0 and seen["0"][0] > 100_000, seen  # torch's and the rest's objects, frozen
    for fresh, (_, kept, freed, collected) in seen.items():
        assert kept and freed and collected >= 1, (fresh, seen)  # a cycle outlives its last name; collect frees it


def test_warm_starts_the_template_a_job_then_finds_serving(monkeypatch):
    """Does ``warm`` start, in a process of its own, the very template (same key) a job of that preload then connects
    to without starting another, and nothing where jobs start no template?"""
    preload = ("colorsys", "torch")  # a template of this test's own: no other test's job shares it
    monkeypatch.setenv(template.FRESH_VARIABLE, "0")
    helper, sock = template.warm(preload), None
    try:
        assert helper.wait(timeout=template.READY_SECONDS) == 0
        start = time.monotonic()
        sock = template.job_template(preload)
        assert time.monotonic() - start < 1 and template.connectable(sock, socket.SOCK_SEQPACKET)
    finally:
        for pid in filter(str.isdigit, os.listdir("/proc") if sock else ()):  # this test's template ends now
            try:
                if str(sock).encode() in Path(f"/proc/{pid}/cmdline").read_bytes():
                    os.kill(int(pid), signal.SIGKILL)
            except OSError:
                pass
    monkeypatch.setenv(template.FRESH_VARIABLE, "1")
    assert template.warm(preload) is None


def test_a_template_at_its_idle_end_takes_its_files_away_and_the_next_job_starts_another(tmp_path, monkeypatch):
    """Does a template that ends idle leave nothing of its key (socket, lock, log) in the templates' folder, so that a
    term of updates does not fill it, and does the next job then start one template anew?"""
    root = Path(tempfile.mkdtemp(prefix="tpl-", dir="/run"))
    monkeypatch.setattr(template, "ROOT", root)
    monkeypatch.setattr(template, "IDLE_SECONDS", 2.0)
    monkeypatch.setenv(template.FRESH_VARIABLE, "0")
    try:
        sock = template.job_template(("colorsys",))
        assert sorted(p.suffix for p in root.iterdir()) == [".lock", ".log", ".sock"]
        deadline = time.monotonic() + 60
        while _templates(root) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert not _templates(root) and list(root.iterdir()) == []
        again = template.job_template(("colorsys",))
        assert again == sock and template.connectable(again, socket.SOCK_SEQPACKET) and len(_templates(root)) == 1
    finally:
        _kill(_templates(root))
        shutil.rmtree(root)


def test_a_starter_waiting_on_a_lock_the_template_took_away_locks_the_new_one(tmp_path):
    """When a starter waits on a key's lock while the ending template holds it and removes the file, does the starter
    then hold a lock file that is at the path (so a third starter waits on the same one), not the removed one?"""
    path = tmp_path / "key.lock"
    ending = open(path, "a")
    fcntl.flock(ending, fcntl.LOCK_EX)
    entered = threading.Event()
    held = {}

    def starter() -> None:
        with template_server.locked(path):
            held["at the path"] = path.exists()
            entered.set()

    thread = threading.Thread(target=starter)
    thread.start()
    time.sleep(0.3)
    assert not entered.is_set()  # waiting on the ending template's lock
    path.unlink()  # the template's tidy, under its lock
    ending.close()
    thread.join(10)
    assert held == {"at the path": True}


def test_an_ending_template_that_waited_on_a_lock_taken_away_leaves_the_next_templates_files(tmp_path):
    """When a template at its idle end waits on its key's lock, and meanwhile another template of the key takes that
    lock file away and a starter holds a new one while it starts a template, does the ending template wait for the
    starter and then leave the new template's socket, log and lock where they are?"""
    sock, log, lock = (tmp_path / f"key{suffix}" for suffix in (".sock", ".log", ".lock"))
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    listener.bind(str(sock))
    served = sock.stat().st_ino
    other = open(lock, "a")  # another template's tidy, holding the key's lock
    fcntl.flock(other, fcntl.LOCK_EX)
    ending = threading.Thread(target=template_server.tidy, args=(listener, str(sock), served))
    ending.start()
    time.sleep(0.3)
    for path in (sock, lock):  # that template takes the key's files away (this socket was at the path no more)
        path.unlink()
    starter = open(lock, "a")  # a starter then holds the new lock file while it starts a template
    fcntl.flock(starter, fcntl.LOCK_EX)
    other.close()
    time.sleep(0.5)
    assert ending.is_alive() and lock.exists()  # waiting on the starter's lock, which is still at the path
    new = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    new.bind(str(sock))
    log.write_text("the new template's log\n")
    starter.close()
    ending.join(10)
    try:
        assert not ending.is_alive()
        assert sorted(p.name for p in tmp_path.iterdir()) == ["key.lock", "key.log", "key.sock"]
    finally:
        new.close()
