# `make demo` and `make test` work on a fresh clone: each sets up .venv first if it is missing.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
# the CPU wheel of torch lies here on the course machines; harmless elsewhere
FIND_LINKS := $(if $(wildcard /opt/wheels),--find-links /opt/wheels,)

.PHONY: demo student test release clean system-packages hub hub-free hub-setup bytecode

$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet $(FIND_LINKS) -e '.[dev,grader,hub]'
	touch $(STAMP)

# the course's own modules compiled ahead (quick when up to date): a sandboxed interpreter may not write bytecode, nor
# may a process of a shell with PYTHONDONTWRITEBYTECODE, so each would compile them from source (0.07 CPU-s a process)
bytecode: $(STAMP)
	$(PY) -m compileall -q course_lib autograder

demo: $(STAMP) bytecode
	$(PY) -m course_lib demo

# the student's JupyterLab on notebooks/a5: started from that folder (so nbgrader_config.py and its grading
# kernel stay out) with student_jupyter/ as its config dir (no formgrader, no Create Assignment, Validate kept)
STUDENT_ENV := env -u JUPYTER_PATH JUPYTER_CONFIG_DIR=$(abspath student_jupyter)
# (Jupyter refuses root unless told: containers and CI machines run as root)
ALLOW_ROOT := $(if $(filter 0,$(shell id -u)),--allow-root,)
student: $(STAMP)
	cd notebooks/a5 && $(STUDENT_ENV) $(abspath $(PY)) -m jupyter lab $(ALLOW_ROOT)

test: $(STAMP) bytecode system-packages hub-setup
	$(PY) -m pytest

# Debian packages the tests use (bubblewrap and setpriv for the grader's confinement, ...): installed as
# root with apt when missing; elsewhere the tests that need them say what is missing and skip
system-packages:
	@bash tools/system_packages.sh

# the course on a JupyterHub (docs/hub.md), as root: tools/hub_setup.sh sets the machine up (the users' passwords, the
# proxy, this checkout's users' tree, nbgrader's exchange, the course world, the instructor's course folder), then the
# hub runs in the foreground until Ctrl+C (which stops the users' servers and the proxy too), at http://127.0.0.1:8000
# (HUB_IP, HUB_PORT). The people must be Linux accounts already; HUB_CREATE_USERS=1 creates the missing ones. A hub
# already running (or its ports taken) is said in one line first, and nothing is changed.
HUB_INSTRUCTOR ?= instructor
HUB_STUDENTS ?= student1 student2
HUB_CREATE_USERS ?=
hub: hub-free $(STAMP)
	bash tools/hub_setup.sh $(if $(filter 1,$(HUB_CREATE_USERS)),--create )$(HUB_INSTRUCTOR) $(HUB_STUDENTS)
	HUB_INSTRUCTOR=$(HUB_INSTRUCTOR) HUB_STUDENTS="$(HUB_STUDENTS)" $(PY) -m jupyterhub -f hub/jupyterhub_config.py

# (the standard library only: it runs before .venv is set up, and must change nothing)
hub-free:
	@$(PYTHON) hub/machine.py free

# tests/hub's users, proxy and exchange, as root (the test runs the same script again, which then has nothing to do,
# and fails with the script's own words if it failed here); elsewhere tests/hub skips and says why
hub-setup: $(STAMP)
	@if [ "$$(id -u)" = 0 ]; then bash tools/hub_setup.sh --create hubtest-instructor hubtest-ada hubtest-bo hubtest-eve hubtest-mal hubtest-sy \
	|| echo "note: tools/hub_setup.sh failed: tests/hub will fail and say why"; \
	else echo "note: not root: the hub tests (tests/hub) will be skipped"; fi

clean:
	rm -rf outputs data/world

# regenerate the student release notebooks/ from solutions/ (commit the result)
release: $(STAMP)
	PATH=$(abspath $(VENV))/bin:$$PATH $(PY) -m nbgrader generate_assignment a5 --force --db=sqlite:///$(abspath $(VENV))/release-gradebook.db
