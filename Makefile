# `make demo` and `make test` work on a fresh clone: each sets up .venv first if it is missing.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
# the CPU wheel of torch lies here on the course machines; harmless elsewhere
FIND_LINKS := $(if $(wildcard /opt/wheels),--find-links /opt/wheels,)

.PHONY: demo test release clean system-packages

$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet $(FIND_LINKS) -e '.[dev]'
	touch $(STAMP)

demo: $(STAMP)
	$(PY) -m course_lib demo

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
