"""The grading kernel nbgrader runs submissions in: an allowlist sandbox (bwrap), no network, nobody, cgroup limits.

Every kernel of one student (one nbgrader process, one notebook folder) is forked from that student's
sandbox (``autograder.nbgrader_glue.zygote``); the sandbox and its cgroup end when its fork server
has been idle for GRADING_ZYGOTE_IDLE_SECONDS (2 s here), or with nbgrader's process.
"""
from __future__ import annotations

import json
import os
import time
from pathlib import Path

import nbformat
import pytest
from conftest import REPO, SOLUTIONS
from jupyter_client import KernelManager
from traitlets.config import Config

from autograder.confinement import status
from autograder.nbgrader_glue import kernel as grading_kernel
from autograder.nbgrader_glue.setup import KERNEL_NAME, configure_grading

MEMORY_MB = 1500
IDLE_SECONDS = 2  # the student's sandbox ends this long after its last kernel
confined = pytest.mark.skipif(status() is not None, reason=f"no confinement here: {status()}")
pytestmark = pytest.mark.timeout(300)


@pytest.fixture(scope="module")
def grading_config():
    """configure_grading's config, with os.environ restored afterwards."""
    saved = dict(os.environ)
    os.environ["GRADING_ZYGOTE_IDLE_SECONDS"] = str(IDLE_SECONDS)
    c = Config()
    configure_grading(c, memory_mb=MEMORY_MB)
    yield c
    os.environ.clear()
    os.environ.update(saved)


def _start(config: Config, cwd: Path) -> tuple[KernelManager, object]:
    km = KernelManager(kernel_name=KERNEL_NAME, config=config)
    km.start_kernel(cwd=str(cwd))
    kc = km.client()
    kc.start_channels()
    kc.wait_for_ready(timeout=60)
    return km, kc


def _run(kc, code: str, timeout: float = 60) -> tuple[str, str]:
    """(status, everything printed or raised) of one cell."""
    out: list[str] = []

    def hook(msg):
        content = msg["content"]
        if msg["msg_type"] == "stream":
            out.append(content["text"])
        elif msg["msg_type"] == "error":
            out.append(f"{content['ename']}: {content['evalue']}")

    reply = _reply_not_aborted(kc, code, timeout=timeout, output_hook=hook)
    return reply["content"]["status"], "".join(out)


def _reply_not_aborted(kc, code: str, **kwargs) -> dict:
    """The reply to ``code``, sent again while ipykernel still aborts what comes in just after a cell's error (its
    stop_on_error window: such a request is answered "aborted", with no user_expressions, and never run)."""
    for _ in range(5):
        reply = kc.execute_interactive(code, **kwargs)
        if reply["content"]["status"] != "aborted":
            return reply
        time.sleep(0.5)
    return reply


def _kernel_host_pid(kc) -> int:
    """Host pid of the sandboxed kernel: the process of uid nobody with the kernel's own pid (in its namespace) and
    start time (the same seen from anywhere), so no other test's sandbox is mistaken for it."""
    out = _run(kc, "import os; print(os.getpid(), open('/proc/self/stat').read().rsplit(')', 1)[1].split()[19])")[1]
    inner, started = out.split()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                status_text = (entry / "status").read_text()
                ids = next(line.split()[1:] for line in status_text.splitlines() if line.startswith("NSpid:"))
                stat_started = (entry / "stat").read_text().rsplit(")", 1)[1].split()[19]
                if ids[-1] == inner and stat_started == started and entry.stat().st_uid == 65534:
                    return int(entry.name)
            except (OSError, StopIteration):
                continue
    raise LookupError(inner)


def _cgroup_dirs(pid: int) -> list[Path]:
    """The memory and pids cgroup folders (v1) of a host process."""
    found = []
    for line in Path(f"/proc/{pid}/cgroup").read_text().splitlines():
        _, controllers, path = line.split(":", 2)
        for name in ("memory", "pids"):
            if name in controllers.split(","):
                found.append(Path("/sys/fs/cgroup", name, path.lstrip("/")))
    return found


@pytest.fixture(scope="module")
def workdir(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("autograded") / "student" / "a5"
    folder.mkdir(parents=True)
    (folder / "notebook.ipynb").write_text("{}")
    return folder


@pytest.fixture
def another_student(tmp_path) -> Path:
    """A notebook folder of its own: a sandbox of its own, which no other test's kernel keeps alive."""
    folder = tmp_path / "autograded" / "another" / "a5"
    folder.mkdir(parents=True)
    return folder


@pytest.fixture(scope="module")
def kernel(grading_config, workdir):
    """One confined kernel shared by the read-only checks: (manager, client)."""
    km, client = _start(grading_config, workdir)
    yield km, client
    client.stop_channels()
    km.shutdown_kernel()


@pytest.fixture(scope="module")
def kc(kernel):
    return kernel[1]


@confined
def test_kernel_runs_as_nobody_in_its_working_folder(kc, workdir):
    """Does notebook code run as uid 65534 in the notebook's own folder?"""
    assert _run(kc, "import os; print(os.getuid(), os.getgid(), os.getcwd())")[1].split() == [
        "65534", "65534", str(workdir)]


@confined
@pytest.mark.parametrize("path", [SOLUTIONS / "05_synthesizer.ipynb", REPO / ".git" / "HEAD",
                                  REPO / "autograder" / "grade.py", REPO / "nbgrader_config.py"])
def test_files_outside_the_allowlist_are_not_there(kc, path):
    """Is a course file outside the allowlist (solutions, .git, the grader) absent for notebook code?"""
    status_, out = _run(kc, f"print(open({str(path)!r}).read()[:100])")
    assert status_ == "error" and "FileNotFoundError" in out, out


@confined
def test_hidden_checks_import_but_solutions_are_absent(kc):
    """Can the hidden test cells import autograder.checks.hidden without the solutions being visible?"""
    out = _run(kc, "import os\nfrom autograder.checks.hidden import SOLUTIONS_DIR, check_span_corruption_hidden\n"
                   "print(SOLUTIONS_DIR.exists(), sorted(os.listdir(SOLUTIONS_DIR.parents[1])))")[1]
    assert out.split(maxsplit=1)[0] == "False" and "solutions" not in out and ".git" not in out, out


@confined
def test_other_processes_are_invisible(kc):
    """Does /proc show only the student's own sandbox: bwrap's init, the holder, its fork server and this kernel?"""
    out = _run(kc, "import os; print(os.getpid(), sorted(int(p) for p in os.listdir('/proc') if p.isdigit()))")[1]
    pid, pids = out.split(maxsplit=1)
    assert set(eval(pids)) <= {1, 2, 3, int(pid)} and int(pid) in eval(pids), out


@confined
def test_network_is_unreachable(kc):
    """Does a connection to the host's loopback or the internet fail?"""
    out = _run(kc, "import socket\nfor address in [('127.0.0.1', 22), ('1.1.1.1', 53)]:\n"
                   "    try:\n        socket.create_connection(address, timeout=2)\n"
                   "        print('CONNECTED', address)\n"
                   "    except OSError as err:\n        print('failed', type(err).__name__)")[1]
    assert "CONNECTED" not in out and out.count("failed") == 2, out


@confined
def test_the_working_folder_takes_new_files_in_the_sandbox_only_and_handed_in_files_never_change(kc, workdir):
    """Can notebook code write a helper into its working folder and import it (as under Run All), with nothing
    reaching the folder nbgrader grades in, and never change or delete a handed-in file?"""
    status, out = _run(kc, "%%writefile span_helpers.py\nSHARE = 0.25")
    assert status == "ok", out
    assert _run(kc, "import span_helpers\nprint(span_helpers.SHARE)")[1] == "0.25\n"
    out = _run(kc, "import os\nfor act in (lambda: open('notebook.ipynb', 'w'), lambda: os.remove('notebook.ipynb')):\n"
                   "    try:\n        act()\n        print('WROTE')\n    except OSError as err:\n"
                   "        print('refused', type(err).__name__)")[1]
    assert "WROTE" not in out and out.count("refused") == 2, out
    assert (workdir / "notebook.ipynb").read_text() == "{}" and not (workdir / "span_helpers.py").exists()


@confined
def test_kernel_cgroup_has_the_limits_and_is_removed_at_shutdown(grading_config, another_student):
    """Is the kernel in a cgroup with the memory and process limits, and is that cgroup gone once the student's
    kernels are done?"""
    km, client = _start(grading_config, another_student)
    folders = _cgroup_dirs(_kernel_host_pid(client))
    values = {f.parents[1].name: f for f in folders}
    assert int((values["memory"] / "memory.limit_in_bytes").read_text()) == MEMORY_MB * 2 ** 20
    assert (values["pids"] / "pids.max").read_text().strip() == "64"
    client.stop_channels()
    km.shutdown_kernel()
    _wait_gone(folders, IDLE_SECONDS + 20)


@confined
def test_killed_kernel_leaves_no_cgroup_or_processes(grading_config, another_student):
    """When jupyter kills the kernel outright (SIGKILL), do its processes and cgroup still go away?"""
    km, client = _start(grading_config, another_student)
    pid = _kernel_host_pid(client)
    folders = _cgroup_dirs(pid)
    client.stop_channels()
    km.shutdown_kernel(now=True)
    _wait_gone([Path(f"/proc/{pid}")])  # the kernel at once
    _wait_gone(folders, IDLE_SECONDS + 20)  # its sandbox once idle


def _wait_gone(paths: list[Path], seconds: float = 10) -> None:
    deadline = time.monotonic() + seconds
    while any(p.exists() for p in paths) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not any(p.exists() for p in paths), [p for p in paths if p.exists()]


@confined
def test_memory_hog_gets_memory_error_and_kernel_survives(grading_config, workdir):
    """Does a memory hog get a MemoryError (not take the machine down), leaving the kernel usable?"""
    km, client = _start(grading_config, workdir)
    try:
        status_, out = _run(client, "hog = []\nwhile True:\n    hog.append(bytearray(2 ** 26))", timeout=120)
        assert status_ == "error" and "MemoryError" in out, out
        assert _run(client, "del hog\nprint('alive')")[1].strip() == "alive"
    finally:
        client.stop_channels()
        km.shutdown_kernel(now=True)


@confined
def test_interrupt_reaches_the_kernel(kernel):
    """Does jupyter's interrupt (SIGINT to the launcher) stop a running cell and keep the kernel?"""
    km, kc = kernel
    sleeping = kc.execute("import time\ntime.sleep(60)")
    time.sleep(1.5)
    started = time.monotonic()
    km.interrupt_kernel()
    # the reply to that cell: run alone, the first shell reply read was another request's (status ok)
    reply = kc.get_shell_msg(timeout=20)
    while reply["parent_header"].get("msg_id") != sleeping:
        reply = kc.get_shell_msg(timeout=20)
    assert reply["content"]["status"] == "error" and reply["content"]["ename"] == "KeyboardInterrupt"
    assert time.monotonic() - started < 20
    # read back through the reply, not the printed stream: under the suite's load the stream printed right after
    # the interrupt once did not reach _run (the cell itself had run)
    after = _reply_not_aborted(kc, "alive = 'still here'", user_expressions={"alive": "alive"}, timeout=60)
    assert after["content"]["user_expressions"]["alive"]["data"]["text/plain"] == "'still here'"


@confined
def test_cell_timeout_interrupts_and_grading_continues(grading_config, workdir):
    """Does nbclient's per-cell timeout (as nbgrader uses it) interrupt a hanging cell and run the next one?"""
    from nbclient import NotebookClient

    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("import time\nwhile True:\n    time.sleep(0.05)"),
                                         nbformat.v4.new_code_cell("print('next cell ran')")])
    client = NotebookClient(nb, kernel_name=KERNEL_NAME, timeout=5, interrupt_on_timeout=True, allow_errors=True,
                            config=grading_config, resources={"metadata": {"path": str(workdir)}})
    started = time.monotonic()
    client.execute()
    assert time.monotonic() - started < 60
    assert any(o.get("ename") in {"KeyboardInterrupt", "CellTimeoutError"} for o in nb.cells[0].outputs), nb.cells[0]
    assert "next cell ran" in "".join(o.get("text", "") for o in nb.cells[1].outputs)


def test_refuses_to_start_unconfined_without_permission(monkeypatch, capsys):
    """Without confinement and without GRADING_ALLOW_UNCONFINED=1, does the kernel refuse and say why?"""
    monkeypatch.setattr(grading_kernel, "status", lambda: "bwrap is not installed")
    monkeypatch.delenv("GRADING_ALLOW_UNCONFINED", raising=False)
    monkeypatch.setattr(os, "execv", lambda *a: pytest.fail("started a kernel"))
    with pytest.raises(SystemExit) as stopped:
        grading_kernel.main(["-f", "connection.json"])
    assert stopped.value.code != 0
    assert "bwrap is not installed" in capsys.readouterr().err


def test_runs_plain_kernel_with_a_warning_when_allowed(monkeypatch, capsys, tmp_path):
    """With GRADING_ALLOW_UNCONFINED=1, does it exec plain ipykernel (rlimits only) and warn?"""
    started = []
    monkeypatch.setattr(grading_kernel, "status", lambda: "bwrap is not installed")
    monkeypatch.setattr(grading_kernel, "limit_resources", lambda *a: None)
    monkeypatch.setenv("GRADING_ALLOW_UNCONFINED", "1")
    monkeypatch.setattr(os, "execv", lambda exe, argv: started.append(argv))
    connection = tmp_path / "connection.json"
    connection.write_text('{"transport": "ipc", "ip": "kernel-ipc", "shell_port": 1}')
    grading_kernel.main(["-f", str(connection)])
    assert started and started[0][1:] == ["-m", "ipykernel_launcher", "-f", str(connection)]
    assert os.path.isabs(json.loads(connection.read_text())["ip"])  # client and kernel agree on the sockets
    assert "WARNING: not confined" in capsys.readouterr().err


def test_configure_grading_uses_ipc_and_ignores_hidden_paths(monkeypatch):
    """Does configure_grading pick the ipc transport and warn that hidden_paths is ignored?"""
    for key in ("JUPYTER_PATH", "GRADING_MEMORY_MB", "GRADING_CPU_SECONDS", "GRADING_READABLE_PATHS"):
        monkeypatch.delenv(key, raising=False)
    c = Config()
    with pytest.warns(DeprecationWarning):
        configure_grading(c, hidden_paths=["/somewhere"])
    assert c.KernelManager.transport == "ipc" and c.Execute.kernel_name == KERNEL_NAME


@confined
def test_a_notebook_that_kills_its_sandboxs_server_harms_nothing(grading_config, another_student):
    """When notebook code kills the fork server it came from (it shares its uid), does that kernel keep running past
    the sandbox's idle time, and the student's next kernel still start?"""
    km, client = _start(grading_config, another_student)
    try:
        code = f"import os, signal, time\nos.kill(os.getppid(), signal.SIGKILL)\ntime.sleep({3 * IDLE_SECONDS})"
        out = _run(client, code + "\nprint('still here')")[1]
        assert "still here" in out
        assert _run(client, "print(6 * 7)")[1].strip() == "42"
    finally:
        client.stop_channels()
        km.shutdown_kernel(now=True)
    km, client = _start(grading_config, another_student)  # the next notebook of the same student
    try:
        assert _run(client, "print('next')")[1].strip() == "next"
    finally:
        client.stop_channels()
        km.shutdown_kernel(now=True)


def test_a_first_kernel_may_answer_late_on_a_busy_machine(grading_config):
    """Does nbgrader wait longer than nbclient's default 60 s for a kernel's first answer (a student's first kernel
    starts the student's sandbox too), while every cell keeps its own time limit?"""
    from nbclient import NotebookClient

    assert grading_config.Execute.startup_timeout >= 3 * NotebookClient.startup_timeout.default_value
    assert grading_config.Execute.timeout == 120 and grading_config.Execute.interrupt_on_timeout


def test_the_fork_servers_preload_starts_no_thread():
    """Does the fork server's preload leave only the main thread (a fork copies just the thread that forks)?"""
    import subprocess
    import sys

    code = ("import threading\nfrom autograder.nbgrader_glue.zygote_server import preload\npreload()\n"
            "print(threading.active_count())")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=REPO)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip().splitlines()[-1] == "1", done.stderr[-2000:]


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="handing the copy to nobody needs root")
def test_the_connection_copy_never_follows_a_link_planted_in_its_place(tmp_path, monkeypatch):
    """Does writing the kernel's connection copy replace a link a leftover process planted at its name, leaving the
    link's target (any host file) with its owner, mode and bytes?"""
    monkeypatch.setattr(grading_kernel, "link_sockets", lambda *args: None)
    victim = tmp_path / "victim.sh"
    victim.write_text("#!/bin/sh\n")
    victim.chmod(0o755)
    private = tmp_path / "private"
    private.mkdir()
    copy = private / "kernel-1.json"
    copy.symlink_to(victim)
    grading_kernel.share_connection({"ip": str(tmp_path / "kernel"), "key": "k"}, private, [], copy)
    assert (victim.stat().st_uid, oct(victim.stat().st_mode & 0o777), victim.read_text()) == (0, "0o755", "#!/bin/sh\n")
    assert not copy.is_symlink() and (copy.stat().st_uid, copy.stat().st_mode & 0o777) == (grading_kernel.NOBODY, 0o600)
    assert json.loads(copy.read_text())["key"] == "k"


@confined
def test_a_kernels_fd_writes_reach_the_notebook_not_the_hosts_log(kc, workdir):
    """Do 8 MB written straight to file descriptors 1 and 2 come back as the cell's output, leaving the student
    supervisor's log on the host (/run) small?"""
    from autograder.nbgrader_glue import zygote

    status_, out = _run(kc, "import os, time\nfor fd in (1, 2):\n    os.write(fd, b'x' * 2 ** 22)\ntime.sleep(1)")
    assert status_ == "ok" and out.count("x") >= 2 ** 22, len(out)
    log = zygote.student_folder(os.getpid(), workdir) / "supervisor.log"
    assert log.stat().st_size < 2 ** 16, log.stat().st_size


@confined
def test_a_one_notebook_students_sandbox_leaves_what_some_notebooks_import_to_its_kernel(
        grading_config, kc, another_student, monkeypatch):
    """Where a student's sandbox imports its own preload (no kernel template), does the sandbox of a student who
    handed in one notebook (one kernel) skip preloading torch._dynamo, which only a training step imports, while a
    student of several notebooks has it preloaded in every kernel (as every kernel from the template has)?"""
    from autograder.confinement import template
    from autograder.nbgrader_glue import zygote

    code = "import sys\nprint(sorted(m for m in ('torch', 'torch._dynamo', 'matplotlib.pyplot') if m in sys.modules))"
    assert _run(kc, code) == ("ok", "['matplotlib.pyplot', 'torch', 'torch._dynamo']\n")  # the module's sandbox
    monkeypatch.setenv(zygote.NOTEBOOKS_VARIABLE, "1")  # as one_student sets it for nbgrader's kernels
    monkeypatch.setenv(template.FRESH_VARIABLE, "1")
    km, client = _start(grading_config, another_student)
    try:
        assert _run(client, code) == ("ok", "['torch']\n")
        assert _run(client, "import torch._dynamo\nprint('imported')") == ("ok", "imported\n")
    finally:
        client.stop_channels()
        km.shutdown_kernel()


@confined
def test_an_autograde_kernel_leaves_what_only_the_public_checks_and_plots_import_to_a_cell_that_needs_it(
        grading_config, kc, another_student, monkeypatch):
    """Under nbgrader's autograde (no check runs in the kernel, the course's plots draw nothing), does a kernel start
    without torch._dynamo, which only Validate's public checks of 02 and 04 import, and pyplot, from the template and
    from a sandbox's own preload alike, with the course's plots off, while a cell that trains or draws can still import
    them, and Validate's kernel has them preloaded and its plots on?"""
    from autograder.confinement import template

    code = "import sys\nprint(sorted(m for m in ('torch', 'torch._dynamo', 'matplotlib.pyplot') if m in sys.modules))"
    plots = ("import os\nfrom course_lib.notebook import plots\n"
             "print(os.environ.get('COURSE_PLOTS'), type(plots.plot_loss([{'step': 0, 'loss': 1.0}])).__name__)")
    assert _run(kc, code) == ("ok", "['matplotlib.pyplot', 'torch', 'torch._dynamo']\n")  # the module's sandbox
    assert _run(kc, plots) == ("ok", "None Axes\n")
    monkeypatch.setenv("NBGRADER_EXECUTION", "autograde")  # as nbgrader's autograde sets it for its kernels
    for fresh in ("0", "1"):  # from the kernel template; a sandbox importing its own preload
        monkeypatch.setenv(template.FRESH_VARIABLE, fresh)
        folder = another_student / fresh
        folder.mkdir()
        km, client = _start(grading_config, folder)
        try:
            assert _run(client, code) == ("ok", "['torch']\n"), fresh
            assert _run(client, plots) == ("ok", "off NotDrawn\n"), fresh
            assert _run(client, "import torch._dynamo\nprint('imported')") == ("ok", "imported\n"), fresh
            assert _run(client, "import matplotlib.pyplot\nprint('imported')") == ("ok", "imported\n"), fresh
        finally:
            client.stop_channels()
            km.shutdown_kernel()


def test_the_server_is_told_when_it_serves_nbgraders_autograde(monkeypatch):
    """Is the fork server told it serves nbgrader's autograde exactly when nbgrader says so, and does its preload
    then leave out torch._dynamo and pyplot and only those?"""
    from autograder.nbgrader_glue import zygote, zygote_server

    for mode, told in (("autograde", True), ("validate", False), ("", False), (None, False)):
        if mode is None:
            monkeypatch.delenv("NBGRADER_EXECUTION", raising=False)
        else:
            monkeypatch.setenv("NBGRADER_EXECUTION", mode)
        assert (zygote.server_arguments(7)[-1] == zygote_server.AUTOGRADE) == told, mode
    full, graded = zygote_server.preload_names(), zygote_server.preload_names(autograde=True)
    assert set(full) - set(graded) == {"torch._dynamo", "matplotlib.pyplot"} and set(graded) < set(full)
    assert not {"torch._dynamo", "matplotlib.pyplot"} & set(zygote_server.template_preload(autograde=True))


def test_the_server_is_lean_only_for_one_notebook(monkeypatch):
    """Is the fork server told to be lean for a student of exactly one notebook, and for no other count?"""
    from autograder.nbgrader_glue import zygote

    for count, lean in (("1", True), ("2", False), ("8", False), ("0", False), (None, False)):
        if count is None:
            monkeypatch.delenv(zygote.NOTEBOOKS_VARIABLE, raising=False)
        else:
            monkeypatch.setenv(zygote.NOTEBOOKS_VARIABLE, count)
        assert (zygote.server_arguments(7)[-1] == "lean") == lean, count


@confined
def test_a_later_notebooks_kernel_sees_the_files_nbgrader_wrote_meanwhile_and_the_helpers_written_before(
        grading_config, another_student, monkeypatch):
    """Does the next kernel of a student's sandbox see a notebook nbgrader wrote into the folder after the sandbox
    started (04's training cell loads 02 and 03 so), beside a helper the previous kernel wrote?"""
    monkeypatch.setenv("GRADING_ZYGOTE_IDLE_SECONDS", "20")  # one sandbox for both kernels, however busy the machine
    km, client = _start(grading_config, another_student)
    try:
        assert _run(client, "%%writefile span_helpers.py\nSHARE = 0.25")[0] == "ok"
    finally:
        client.stop_channels()
        km.shutdown_kernel(now=True)
    (another_student / "02_autograded.ipynb").write_text('{"written": "by nbgrader"}')
    km, client = _start(grading_config, another_student)  # the next notebook of the same student
    try:
        out = _run(client, "import span_helpers\nprint(span_helpers.SHARE, open('02_autograded.ipynb').read())")[1]
        assert out == '0.25 {"written": "by nbgrader"}\n', out
    finally:
        client.stop_channels()
        km.shutdown_kernel(now=True)


# what a kernel sees of itself and its sandbox (printed as one JSON line)
SEEN = """import ctypes, json, os, re, socket, sys
status = dict(line.split(':\\t', 1) for line in open('/proc/self/status').read().splitlines() if ':\\t' in line)
others = sorted(int(p) for p in os.listdir('/proc') if p.isdigit() and int(p) != os.getpid())
fds = []  # what each descriptor is, not which one (ZMQ's threads open theirs in either order)
for fd in os.listdir('/proc/self/fd'):
    try:
        fds.append(re.sub('[0-9]+', 'N', os.readlink(f'/proc/self/fd/{fd}')))
    except OSError:
        pass  # the listing's own
fds = [kind for kind in fds if not kind.endswith('-journal')]  # open while IPython's history thread writes
print(json.dumps({
    'ids': [os.getresuid(), os.getresgid(), os.getgroups()],
    'caps': [status[k].strip() for k in ('CapInh', 'CapPrm', 'CapEff', 'CapBnd', 'CapAmb')],
    'no_new_privs': status['NoNewPrivs'].strip(), 'seccomp': status['Seccomp'].strip(),
    'host': socket.gethostname(), 'cwd': os.getcwd(), 'umask': os.umask(0o22),
    'env': dict(os.environ), 'argv': sys.argv, 'flags': list(sys.flags), 'path': sys.path, 'hash': hash('abc'),
    'executable': sys.executable, 'stdin': os.readlink('/proc/self/fd/0'),
    'mounts': [line.split()[3:5] for line in open('/proc/self/mountinfo')],
    'cgroups': open('/proc/self/cgroup').read().split(), 'limits': open('/proc/self/limits').read(),
    'tty': os.path.exists('/dev/tty') and os.isatty(0),
    'others': [open(f'/proc/{p}/comm').read().strip() for p in others],
    'dumpable': ctypes.CDLL(None).prctl(3, 0, 0, 0, 0), 'owner': os.stat('/proc/self/oom_score_adj').st_uid,
    'course_lib': sorted(m for m in sys.modules if m.startswith('course_lib')),
    'fds': sorted(fds), 'stdio': [os.readlink(f'/proc/self/fd/{fd}').split(':')[0] for fd in (0, 1, 2)],
}))
"""


def _seen_by_a_kernel(config: Config, folder: Path, monkeypatch, fresh: bool) -> dict:
    """What a kernel's cell sees, its student's sandbox started on its own interpreter (``fresh``) or from the
    kernel template; the sandbox ended afterwards, so the next one starts anew in the same folder."""
    import re

    from autograder.confinement import template
    from autograder.nbgrader_glue import zygote

    monkeypatch.setenv(template.FRESH_VARIABLE, "1" if fresh else "0")
    km, client = _start(config, folder)
    try:
        status_, out = _run(client, SEEN)
    finally:
        client.stop_channels()
        km.shutdown_kernel(now=True)
    assert status_ == "ok", out
    supervisor = zygote.student_folder(os.getpid(), folder)
    log = (supervisor / "supervisor.log").read_text() if supervisor.exists() else ""
    assert "starts its own interpreter" not in log, log[-2000:]
    deadline = time.monotonic() + 60
    while supervisor.exists() and time.monotonic() < deadline:  # the sandbox idles out
        time.sleep(0.2)
    return json.loads(re.sub(r"/tmp[a-z0-9_]+\.json", "/tmpX.json", out))  # each kernel's own connection file


@confined
def test_a_kernel_from_the_template_sees_the_sandbox_bubblewrap_gives_a_server_of_its_own(grading_config,
                                                                                         another_student, monkeypatch):
    """Does a kernel whose sandbox's server was forked from the kernel template see what one whose server bubblewrap
    started sees: ids, capabilities, no_new_privs, dumpable flag, hostname, working folder, umask, environment, argv,
    interpreter flags, hash seed, import path, descriptors, mounts, cgroups, rlimits, the course's modules imported in
    the sandbox, and no terminal, with only bubblewrap's init and the holder to see beside its server?"""
    fresh = _seen_by_a_kernel(grading_config, another_student, monkeypatch, fresh=True)
    warm = _seen_by_a_kernel(grading_config, another_student, monkeypatch, fresh=False)
    assert fresh.pop("others") == ["python"] and warm.pop("others") == ["bwrap", "sh", "python"], (fresh, warm)
    env = {k: (fresh["env"].get(k), warm["env"].get(k)) for k in {*fresh["env"], *warm["env"]}
           if fresh["env"].get(k) != warm["env"].get(k)}
    assert warm == fresh, (env, {key: (fresh[key], warm[key]) for key in fresh if fresh[key] != warm.get(key)})
    assert fresh["ids"] == [[65534] * 3, [65534] * 3, []] and set(fresh["caps"]) == {"0000000000000000"}
    import subprocess
    import sys

    seeded = subprocess.run([sys.executable, "-c", "print(hash('abc'))"], capture_output=True, text=True,
                            env={"PYTHONHASHSEED": "0"}).stdout
    assert fresh["course_lib"] and fresh["env"]["PYTHONHASHSEED"] == "0" and fresh["hash"] == int(seeded)
