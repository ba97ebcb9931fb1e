# `make demo` and `make test` work on a fresh clone: each sets up .venv first if it is missing.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
# the CPU wheel of torch lies here on the course machines; harmless elsewhere
FIND_LINKS := $(if $(wildcard /opt/wheels),--find-links /opt/wheels,)

.PHONY: demo student test release clean system-packages

$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet $(FIND_LINKS) -e '.[dev,grader]'
	touch $(STAMP)

demo: $(STAMP)
	$(PY) -m course_lib demo

# the student's JupyterLab on notebooks/a5: started from that folder (so nbgrader_config.py and its grading
# kernel stay out) with student_jupyter/ as its config dir (no formgrader, no Create Assignment, Validate kept)
STUDENT_ENV := env -u JUPYTER_PATH JUPYTER_CONFIG_DIR=$(abspath student_jupyter)
# (Jupyter refuses root unless told: containers and CI machines run as root)
ALLOW_ROOT := $(if $(filter 0,$(shell id -u)),--allow-root,)
student: $(STAMP)
	cd notebooks/a5 && $(STUDENT_ENV) $(abspath $(PY)) -m jupyter lab $(ALLOW_ROOT)

test: $(STAMP) system-packages
	$(PY) -m pytest

# Debian packages the tests use (bubblewrap and setpriv for the grader's confinement, ...): installed as
# root with apt when missing; elsewhere the tests that need them say what is missing and skip
system-packages:
	@bash tools/system_packages.sh

clean:
	rm -rf outputs data/world

# regenerate the student release notebooks/ from solutions/ (commit the result)
release: $(STAMP)
	PATH=$(abspath $(VENV))/bin:$$PATH $(PY) -m nbgrader generate_assignment a5 --force --db=sqlite:///$(abspath $(VENV))/release-gradebook.db
