"""A student's JupyterLab (as `make student` starts it) and one headless Chromium, shared by the module.

The server runs in a temp folder of notebook copies, on 127.0.0.1 with a token and a free port, with
student_jupyter/ as its config dir and no JUPYTER_PATH: what a student who typed `make student` sees.
Screenshots of every step go to outputs/browser/ (git-ignored), so a failing run shows what the browser showed.
"""
from __future__ import annotations

import json
import os
import re
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from course_lib.layout import RELEASE_DIR as RELEASE
from course_lib.layout import REPO
from course_lib.layout import SOLUTIONS_DIR as SOLUTIONS
from course_lib.world import write_world

CHROMIUM = Path("/usr/bin/chromium")
SHOTS = REPO / "outputs" / "browser"
# Playwright's own browser download is unreachable here: Debian's Chromium, quiet and offline
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]


def _skip_without_browser() -> None:
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        pytest.skip("playwright (Python) is not installed: pip install -e '.[dev]'")
    if not CHROMIUM.is_file():
        pytest.skip(f"{CHROMIUM} is missing: apt-get install chromium (make test does it as root)")


def solution_source(notebook: str, grade_id: str) -> str:
    """The instructor's code of one solution cell, without nbgrader's BEGIN/END SOLUTION lines."""
    cells = json.loads((SOLUTIONS / notebook).read_text(encoding="utf-8"))["cells"]
    cell = next(c for c in cells if c["metadata"].get("nbgrader", {}).get("grade_id") == grade_id)
    lines = "".join(cell["source"]).splitlines()
    return "\n".join(line for line in lines if not re.match(r"\s*### (BEGIN|END) SOLUTION", line))


def filled_copy(notebook: str, out: Path) -> Path:
    """The release notebook with every answer cell holding the solution: a student who is done."""
    nb = json.loads((RELEASE / notebook).read_text(encoding="utf-8"))
    for cell in nb["cells"]:
        meta = cell["metadata"].get("nbgrader", {})
        if meta.get("solution"):  # code answers and written ones
            cell["source"] = solution_source(notebook, meta["grade_id"])
    out.write_text(json.dumps(nb, indent=1), encoding="utf-8")
    return out


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait_up(url: str, proc: subprocess.Popen, log: Path, seconds: float = 60) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"jupyter lab exited ({proc.returncode}):\n{log.read_text()[-3000:]}")
        try:
            with urllib.request.urlopen(url, timeout=2):
                return
        except OSError:
            time.sleep(0.3)
    raise RuntimeError(f"jupyter lab did not answer in {seconds} s:\n{log.read_text()[-3000:]}")


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    """The student's JupyterLab on a folder of notebook copies: yields (base URL with token, folder)."""
    _skip_without_browser()
    root = tmp_path_factory.mktemp("student")
    work, state = root / "a5", root / "state"
    work.mkdir()
    for name in ("01_setup_and_tour.ipynb", "03_span_corruption.ipynb", "07_attention_exploration.ipynb"):
        shutil.copy(RELEASE / name, work / name)
    filled_copy("07_attention_exploration.ipynb", work / "07_filled.ipynb")
    filled_copy("08_position_embeddings.ipynb", work / "08_filled.ipynb")
    write_world(state / "data", seed=0)  # the student's data folder (03 reads it), kept out of the repo
    env = {k: v for k, v in os.environ.items() if not k.startswith(("JUPYTER", "GRADING_", "NBGRADER"))}
    env.update(JUPYTER_CONFIG_DIR=str(REPO / "student_jupyter"), JUPYTER_RUNTIME_DIR=str(state / "runtime"),
               COURSE_PRESET="smoke", COURSE_DATA_DIR=str(state / "data"), COURSE_OUT_DIR=str(state / "out"),
               OMP_NUM_THREADS="1", COURSE_THREADS="1")
    port, token = _free_port(), secrets.token_hex(16)
    log = state / "lab.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    # the student's command (Makefile `student`), plus a port, a token and state kept out of the repo
    cmd = [sys.executable, "-m", "jupyter", "lab", "--no-browser", "--ip=127.0.0.1", f"--port={port}",
           "--ServerApp.port_retries=0", f"--IdentityProvider.token={token}",
           f"--LabApp.workspaces_dir={state / 'workspaces'}", f"--LabApp.user_settings_dir={state / 'settings'}"]
    cmd += ["--allow-root"] if os.geteuid() == 0 else []  # CI runs as root
    with log.open("w") as out:
        proc = subprocess.Popen(cmd, cwd=work, env=env, stdout=out, stderr=subprocess.STDOUT,
                                start_new_session=True)
    base = f"http://127.0.0.1:{port}"
    try:
        # not waited for here: the browser starts while the server boots (lab_tab waits)
        yield {"base": base, "token": token, "log": log,
               "ready": lambda: _wait_up(f"{base}/api/status?token={token}", proc, log)}
    finally:
        _stop(proc)


def _stop(proc: subprocess.Popen) -> None:
    """SIGTERM to the server's process group (it and the kernels it started), SIGKILL after 15 s."""
    for sig, wait in ((signal.SIGTERM, 15), (signal.SIGKILL, None)):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            return
        try:
            proc.wait(timeout=wait)
            return
        except subprocess.TimeoutExpired:
            continue


@pytest.fixture(scope="module")
def browser():
    """One headless Debian Chromium for the module."""
    _skip_without_browser()
    from playwright.sync_api import sync_playwright

    profile = Path(os.environ.get("TMPDIR", "/tmp")) / f"course-chromium-{os.getpid()}-{secrets.token_hex(4)}"
    with sync_playwright() as p:
        chromium = p.chromium.launch_persistent_context(
            str(profile), executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS,
            viewport={"width": 1280, "height": 900}, reduced_motion="reduce")  # less to paint on 2 cores
        try:
            yield chromium
        finally:
            chromium.close()
            shutil.rmtree(profile, ignore_errors=True)


@pytest.fixture(scope="module")
def lab_tab(lab, browser):
    """One tab on the student's JupyterLab for the module: notebooks open from its file browser, no reloads."""
    lab["ready"]()
    tab = browser.new_page()
    tab.set_default_timeout(30_000)
    tab.goto(f"{lab['base']}/lab?reset&token={lab['token']}")  # reset: a fresh workspace, nothing restored
    tab.locator(".jp-DirListing-item").first.wait_for(timeout=60_000)
    yield tab
    tab.close()


@pytest.fixture
def page(lab, lab_tab, request):
    """The module's tab; `page.shot(step)` saves outputs/browser/<test>-<step>.png; a failure saves one and the log."""
    SHOTS.mkdir(parents=True, exist_ok=True)
    name = request.node.name.removeprefix("test_")

    def shot(step: str) -> None:
        lab_tab.screenshot(path=str(SHOTS / f"{name}-{step}.png"))

    lab_tab.shot = shot
    yield lab_tab
    report = getattr(request.node, "rep_call", None)
    if report is not None and report.failed:
        shot("failed")
        shutil.copy(lab["log"], SHOTS / f"{name}-failed-lab.log")  # what the server said up to then
        lab_tab.keyboard.press("Escape")  # a dialog left open would block the next test


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item, call):
    """Keep each phase's report on the test item, so the page fixture can screenshot a failure."""
    report = yield
    setattr(item, f"rep_{report.when}", report)
    return report
