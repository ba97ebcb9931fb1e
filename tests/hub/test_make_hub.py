"""`make hub` as written: the setup script and JupyterHub for the same people, with the course's hub config (no hub is
started here: tests/hub/test_assignment_life.py starts one)."""
from __future__ import annotations

import os
import re
import subprocess

from traitlets.config.loader import PyFileConfigLoader

from course_lib.layout import REPO


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
    """Does `make hub` run tools/hub_setup.sh, then JupyterHub with hub/jupyterhub_config.py, for the same people?"""
    setup, start = _make_hub()
    assert setup == "bash tools/hub_setup.sh instructor student1 student2"
    assert start.endswith(".venv/bin/python -m jupyterhub -f hub/jupyterhub_config.py")
    assert 'HUB_INSTRUCTOR=instructor HUB_STUDENTS="student1 student2" ' in start
    setup, start = _make_hub("HUB_INSTRUCTOR=ada", "HUB_STUDENTS=al bo")
    assert setup == "bash tools/hub_setup.sh ada al bo" and 'HUB_INSTRUCTOR=ada HUB_STUDENTS="al bo" ' in start


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
    assert config.Spawner.cmd == ["/opt/attention-hub/python/bin/python", "-m", "jupyterhub.singleuser"]
    assert set(config.Spawner.environment) == {"PATH", "COURSE_ID", "COURSE_EXCHANGE", "COURSE_DATA_DIR",
                                               "COURSE_PRESET"}
    assert config.ConfigurableHTTPProxy.command == [str(REPO / "hub" / "node_modules" / ".bin" /
                                                        "configurable-http-proxy")]
    assert '"configurable-http-proxy": "5.2.0"' in (REPO / "hub" / "package.json").read_text()
