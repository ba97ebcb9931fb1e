"""Shared fixtures: the reference solutions (loaded from the solution notebooks) and data paths."""
from __future__ import annotations

import os
import shutil
from pathlib import Path

# under pytest-xdist two workers share the two cores: one torch thread each (and in every
# kernel or subprocess they start), or oversubscribed threads make cell timeouts flaky
if os.environ.get("PYTEST_XDIST_WORKER"):
    os.environ["OMP_NUM_THREADS"] = os.environ["COURSE_THREADS"] = "1"

import pytest  # noqa: E402
import torch  # noqa: E402

if os.environ.get("PYTEST_XDIST_WORKER"):
    torch.set_num_threads(1)

from course_lib.layout import ORIGINAL_DATA_DIR as ORIGINAL_DATA  # noqa: E402
from course_lib.layout import REPO  # noqa: E402,F401 (tests import it from here)
from course_lib.layout import SOLUTIONS_DIR as SOLUTIONS  # noqa: E402
from course_lib.layout import TEST_ANSWERS, WIKI  # noqa: E402
from course_lib.loader.load import load_notebooks, notebook_paths  # noqa: E402


@pytest.fixture(scope="session")
def reference():
    """The graded parts as the instructor wrote them, loaded by the student loader."""
    return load_notebooks(notebook_paths(SOLUTIONS), module_name="reference_solutions")


@pytest.fixture(scope="session")
def original_data() -> Path:
    if not (ORIGINAL_DATA / "wiki.txt").is_file():
        pytest.skip(f"the original course files are not at {ORIGINAL_DATA}")
    return ORIGINAL_DATA


@pytest.fixture(scope="session")
def _world_files(tmp_path_factory) -> dict[str, Path]:
    """The default world: the student files in one folder, its test answers in a separate grader-only one."""
    from course_lib.world import write_world

    answers = tmp_path_factory.mktemp("grader_only") / TEST_ANSWERS
    return write_world(tmp_path_factory.mktemp("world"), seed=0, answers_path=answers)


@pytest.fixture(scope="session")
def world_dir(_world_files) -> Path:
    """The student data folder of the default world (no test answers in it)."""
    return _world_files[WIKI].parent


@pytest.fixture(scope="session")
def world_answers(_world_files) -> Path:
    """The grader-only test answers (birth_test.tsv) of the world in ``world_dir``."""
    return _world_files[TEST_ANSWERS]


@pytest.fixture(scope="session")
def postgres():
    """A real PostgreSQL server (Debian's binaries) for this test process, stopped at the end; each module that
    uses it creates a database of its own name."""
    import postgres_server

    bin_dir, why = postgres_server.find_binaries()
    if bin_dir is None:
        pytest.skip(why)
    server = postgres_server.start_server()
    yield server
    server.stop()


def shared_folder(tmp_path_factory, name: str) -> Path:
    """A folder of this test session shared by every xdist worker (their basetemps' parent), else the basetemp."""
    base = tmp_path_factory.getbasetemp()
    return (base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base) / name


def _made_once(tmp_path_factory, name: str, make) -> Path:
    """The folder ``name``/outputs that ``make(outputs)`` fills: once per test session, whichever worker asks first
    (the others wait on a lock), never changed after."""
    from filelock import FileLock

    folder = shared_folder(tmp_path_factory, name)
    with FileLock(str(folder) + ".lock"):
        if not (folder / "done").is_file():
            shutil.rmtree(folder, ignore_errors=True)
            make(folder / "outputs")
            (folder / "done").write_text("")
    return folder / "outputs"


def _smoke_runs_with(seed: int, tmp_path_factory, world_dir, reference) -> Path:
    """The reference's run files (params, predictions, logs) in the smoke preset on the default world, trained with
    ``seed`` (``_made_once``)."""
    from course_lib.run_specs import RUNS
    from course_lib.runs import run

    def make(outputs: Path) -> None:
        for name in RUNS:
            run(name, reference, preset="smoke", data_dir=world_dir, out_dir=outputs, seed=seed, progress=False)

    return _made_once(tmp_path_factory, f"smoke-runs-{seed}", make)


@pytest.fixture(scope="session")
def smoke_runs(tmp_path_factory, world_dir, reference) -> Path:
    """The reference's smoke-preset run files, trained with seed 0 (see ``_smoke_runs_with``)."""
    return _smoke_runs_with(0, tmp_path_factory, world_dir, reference)


@pytest.fixture(scope="session")
def personal_smoke_runs(tmp_path_factory, world_dir, reference):
    """student id -> the reference's smoke-preset run files as that student trains them: with their personal seed
    (``course_lib.seeds``), as the notebooks do on the hub, where the student's JupyterHub user is their id."""
    from course_lib.seeds import personal_seed

    return lambda student: _smoke_runs_with(personal_seed(student), tmp_path_factory, world_dir, reference)


@pytest.fixture(scope="session")
def cheat_runs(tmp_path_factory, world_dir, smoke_runs) -> Path:
    """The seed-0 smoke run files with the vanilla pretrained run's params and predictions replaced by a model
    finetuned on the test and dev questions (``cheats.trained_on_the_answers``), made once (``_made_once``):
    test_audit.py and test_plausibility.py copy them."""
    from cheats import trained_on_the_answers

    def make(outputs: Path) -> None:
        shutil.copytree(smoke_runs, outputs)
        trained_on_the_answers(outputs, world_dir)

    return _made_once(tmp_path_factory, "cheat-runs", make)


# The test files whose module fixtures grade a whole cohort, slowest first. pytest-xdist's loadfile schedule hands
# out files by their number of tests, so these few-test files came last and one worker ran the slowest alone at the
# end of the suite; started first, on workers of their own, they overlap the rest.
SLOWEST_FILES = ("tests/autograder/grading/test_honest_cohort.py", "tests/autograder/grading/test_adversarial.py",
                 "tests/autograder/nbgrader_glue/test_nbgrader_autograde.py")


def pytest_xdist_make_scheduler(config, log):
    """pytest-xdist's loadfile schedule, with SLOWEST_FILES at the head of its queue."""
    if config.getoption("dist") != "loadfile":
        return None
    from xdist.scheduler import LoadFileScheduling

    class SlowestFirst(LoadFileScheduling):
        _ordered = False

        def _assign_work_unit(self, node):
            if not self._ordered:  # the queue is complete at the first assignment
                self._ordered = True
                for scope in reversed(SLOWEST_FILES):
                    if scope in self.workqueue:
                        self.workqueue.move_to_end(scope, last=False)
            super()._assign_work_unit(node)

    return SlowestFirst(config, log)
