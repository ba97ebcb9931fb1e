"""`make hub` as written: the setup script and JupyterHub for the same people, with the course's hub config; and its
life as a person sees it: `make hub` again on a running hub changes nothing, Ctrl+C (or the hub dying) leaves no
proxy behind (tests/hub/test_assignment_life.py uses a hub for the course's own steps)."""
from __future__ import annotations

import os
import re
import signal
import subprocess
import time
import urllib.request
from pathlib import Path

import pytest
from traitlets.config.loader import PyFileConfigLoader

from course_lib.layout import REPO

from . import hub_server
from .hub_server import machine


def _make_hub(*settings: str) -> list[str]:
    """The commands `make hub` would run (make -n; -W: as if .venv were just set up, so nothing is reinstalled)."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("MAKEFLAGS", "MAKELEVEL", "MFLAGS", "HUB_INSTRUCTOR", "HUB_STUDENTS")}
    done = subprocess.run(["make", "--no-print-directory", "-n", "-W", ".venv/.installed", "hub", *settings],
                          cwd=REPO, env=env, text=True, capture_output=True, check=True)
    return done.stdout.strip().splitlines()[-2:]


def _hub_config(tmp_path, **env: str):
    """hub/jupyterhub_config.py as JupyterHub loads it, with ``env`` set (its state folder in tmp_path)."""
    saved = dict(os.environ)
    os.environ.update(HUB_STATE=str(tmp_path / "state"), **env)
    try:
        return PyFileConfigLoader("jupyterhub_config.py", path=str(REPO / "hub")).load_config()
    finally:
        os.environ.clear()
        os.environ.update(saved)


def test_make_hub_sets_up_and_starts_the_course_hub():
    """Does `make hub` run tools/hub_setup.sh, then JupyterHub with hub/jupyterhub_config.py, for the same people,
    letting the setup create accounts only when HUB_CREATE_USERS=1 asks it to?"""
    setup, start = _make_hub()
    assert setup == "bash tools/hub_setup.sh instructor student1 student2"
    assert start.endswith(".venv/bin/python -m jupyterhub -f hub/jupyterhub_config.py")
    assert 'HUB_INSTRUCTOR=instructor HUB_STUDENTS="student1 student2" ' in start
    setup, start = _make_hub("HUB_INSTRUCTOR=ada", "HUB_STUDENTS=al bo")
    assert setup == "bash tools/hub_setup.sh ada al bo" and 'HUB_INSTRUCTOR=ada HUB_STUDENTS="al bo" ' in start
    assert _make_hub("HUB_CREATE_USERS=1")[0] == "bash tools/hub_setup.sh --create instructor student1 student2"
    assert _make_hub("HUB_CREATE_USERS=yes")[0] == "bash tools/hub_setup.sh instructor student1 student2"


def test_the_hub_lets_in_the_people_the_setup_makes(tmp_path):
    """Does the hub config let in exactly its instructor and students, by default those tools/hub_setup.sh makes?"""
    setup = (REPO / "tools" / "hub_setup.sh").read_text()
    instructor = re.search(r"^INSTRUCTOR=\$\{1:-(\S+)\}", setup, re.M).group(1)
    students = re.search(r"\|\| STUDENTS=\((.*)\)", setup).group(1).split()
    config = _hub_config(tmp_path)
    assert config.Authenticator.allowed_users == {instructor, *students}
    assert config.Authenticator.admin_users == set()
    assert _hub_config(tmp_path, HUB_INSTRUCTOR="ada", HUB_STUDENTS="al bo").Authenticator.allowed_users == \
        {"ada", "al", "bo"}


def test_the_hub_starts_servers_with_the_users_python_and_the_pinned_proxy(tmp_path):
    """Does each user's server start from the users' Python, with only the settings it is given, behind the proxy
    that hub/package-lock.json pins?"""
    config = _hub_config(tmp_path)
    tree = Path("/opt/attention-hub") / machine.checkout_id(REPO)
    assert config.Spawner.cmd == [str(tree / "python" / "bin" / "python"), "-m", "jupyterhub.singleuser"]
    assert set(config.Spawner.environment) == {"PATH", "COURSE_ID", "COURSE_EXCHANGE", "COURSE_DATA_DIR",
                                               "COURSE_PRESET", "COURSE_GRADED_PRESET"}
    assert config.Spawner.environment["COURSE_GRADED_PRESET"] == config.Spawner.environment["COURSE_PRESET"]
    assert config.Spawner.environment["PATH"].startswith(f"{tree / 'python' / 'bin'}:")
    assert config.ConfigurableHTTPProxy.command[-1] == str(REPO / "hub" / "node_modules" / ".bin" /
                                                           "configurable-http-proxy")
    assert '"configurable-http-proxy": "5.2.0"' in (REPO / "hub" / "package.json").read_text()


def test_two_checkouts_have_two_users_trees(tmp_path):
    """Do two checkouts (by their real paths) get two users' trees under /opt/attention-hub, the same checkout
    reached through a link the same one, and does the hub config name its own checkout's?"""
    other = tmp_path / "other-checkout"
    other.mkdir()
    (tmp_path / "link").symlink_to(REPO)
    assert machine.users_tree(REPO) != machine.users_tree(other)
    assert machine.users_tree(tmp_path / "link") == machine.users_tree(REPO)
    assert {machine.users_tree(REPO).parent, machine.users_tree(other).parent} == {Path("/opt/attention-hub")}
    assert _hub_config(tmp_path).Spawner.cmd[0].startswith(f"{machine.users_tree(REPO)}/")


# --- a hub's life, as root with the test users ---
def _running(pid: int, name: str = "configurable-http-proxy") -> bool:
    try:
        return name.encode() in Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return False


def _gone(pid: int, seconds: float = 15) -> bool:
    deadline = time.monotonic() + seconds
    while _running(pid) and time.monotonic() < deadline:
        time.sleep(0.2)
    return not _running(pid)


@pytest.mark.timeout(600)
def test_make_hub_on_a_running_hub_says_so_changes_nothing_and_ctrl_c_leaves_no_proxy(machine_ready, tmp_path):
    """With a hub started by `make hub` serving, does `make hub` again exit non-zero with one line saying so, leave
    the hub, its proxy and the users' tree as they were, and does Ctrl+C then stop the hub with its proxy?"""
    hub = hub_server.start_hub(tmp_path / "hub.log", make=True)
    hub.users = ()  # nobody logs in: no server of its own to end (the test users' may be another test's hub's)
    try:
        proxy = hub.proxy_pid()
        tree = (machine.users_tree(REPO) / "python").stat().st_ino
        again = subprocess.run(hub.command, cwd=REPO, env=hub.env, capture_output=True, text=True, timeout=120)
        said = [line for line in again.stderr.splitlines() if not line.startswith("make: ***")]
        assert again.returncode != 0 and again.stdout == ""
        assert len(said) == 1 and "a hub is already running" in said[0], again.stderr
        assert _running(proxy) and hub.proxy_pid() == proxy
        with urllib.request.urlopen(f"{hub.url}/hub/login", timeout=10) as page:
            assert page.status == 200
        assert (machine.users_tree(REPO) / "python").stat().st_ino == tree  # not rebuilt under the running hub
        hub.interrupt()  # Ctrl+C
        assert hub.process.returncode is not None
        assert _gone(proxy), "Ctrl+C left the proxy running"
    finally:
        hub.stop()


@pytest.mark.timeout(300)
def test_a_hub_that_dies_takes_its_proxy_with_it(machine_ready, tmp_path):
    """When the hub is killed outright (no clean-up of its own), does its proxy end too, freeing the ports?"""
    hub = hub_server.start_hub(tmp_path / "hub.log")
    hub.users = ()  # as above
    try:
        proxy = hub.proxy_pid()
        os.kill(hub.process.pid, signal.SIGKILL)
        hub.process.wait(timeout=30)
        assert _gone(proxy), "the proxy outlived its hub"
        port = int(hub.env["HUB_PORT"])
        deadline = time.monotonic() + 15  # the kernel frees a dead process's listening socket as it reaps it
        while machine._taken("127.0.0.1", port) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert machine._taken("127.0.0.1", port) is False
    finally:
        hub.stop()
