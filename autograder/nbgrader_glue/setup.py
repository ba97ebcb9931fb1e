"""nbgrader settings shared by the course's nbgrader_config.py and the autograde tests.

    from autograder.nbgrader_glue.setup import configure_grading
    configure_grading(c, timeout=120)
"""
from __future__ import annotations

import atexit
import os
import shutil
import tempfile
import warnings
from pathlib import Path

KERNEL_NAME = "course-grading"  # autograder/jupyter/kernels/<this>/kernel.json
KERNELS_ROOT = Path(__file__).resolve().parent / "jupyter"


def configure_grading(c, timeout: int = 120, memory_mb: int = 4096, cpu_seconds: int = 1800,
                      hidden_paths: list[str | Path] = (), readable_paths: list[str | Path] = ()) -> None:
    """Execute every notebook (validate, autograde) in the confined grading kernel (autograder.nbgrader_glue.kernel).

    The kernel sees an allowlist (its notebook's folder, the course library, the
    data folders), so nothing needs hiding: ``hidden_paths`` is ignored.
    ``readable_paths`` are extra data folders it may read.
    """
    # nbgrader run as root in the instructor's course folder (`nbgrader export` there, as docs/hub.md allows) leaves
    # what it writes to the instructor, as `python -m autograder` does: else their own nbgrader meets root's files
    from autograder.ownership import given_back_at_exit

    given_back_at_exit()
    # a gradebook this process creates is stamped without nbgrader's `alembic` command (2 s a gradebook)
    from autograder.exports.gradebook_stamp import stamp_in_process

    stamp_in_process()
    if hidden_paths:
        warnings.warn("configure_grading(hidden_paths=...) is ignored: the grading kernel sees only an allowlist",
                      DeprecationWarning, stacklevel=2)
    paths = [str(KERNELS_ROOT), *filter(None, os.environ.get("JUPYTER_PATH", "").split(os.pathsep))]
    os.environ["JUPYTER_PATH"] = os.pathsep.join(dict.fromkeys(paths))
    # the kernel reads its limits from the environment it inherits
    os.environ["GRADING_MEMORY_MB"] = str(memory_mb)
    os.environ["GRADING_CPU_SECONDS"] = str(cpu_seconds)
    given = [p for p in os.environ.get("GRADING_READABLE_PATHS", "").split(os.pathsep) if p]  # autograder autograde's
    os.environ["GRADING_READABLE_PATHS"] = os.pathsep.join(dict.fromkeys(
        [*given, *(str(Path(p).resolve()) for p in readable_paths)]))
    os.environ.pop("GRADING_HIDDEN_PATHS", None)
    # unix sockets: ZMQ over TCP cannot reach a kernel in its own network namespace
    c.KernelManager.transport = "ipc"
    # and in a folder of this process's own: jupyter_client numbers socket files by which names are free yet, so
    # parallel nbgrader processes in one course folder (autograder autograde --workers) could pick the same ones
    sockets = tempfile.mkdtemp(prefix="nbgrader-sockets-")
    atexit.register(shutil.rmtree, sockets, True)
    c.KernelManager.ip = os.path.join(sockets, "kernel")
    c.Execute.kernel_name = KERNEL_NAME
    c.Execute.timeout = timeout  # seconds per cell; a cell past it is interrupted and scores zero
    c.Execute.interrupt_on_timeout = True
    # a kernel's first answer (nbclient waits 60 s by default): a student's first kernel also starts its sandbox, and
    # on a machine whose cores are all busy that alone took over 60 s; the student's own time limit still bounds it
    c.Execute.startup_timeout = 180
    configure_feedback(c)
    # collect takes a submission only from the account that owns it, each student in a unit of its own, links copied as
    # links (the collect step drops them); what it refuses goes to the course's collect_refused.csv
    c.ExchangeFactory.collect = "autograder.nbgrader_glue.exchange.OwnedCollect"
    # release_feedback hands each student's pages out in a unit of their own: one student's missing secret stops nobody
    c.ExchangeFactory.release_feedback = "autograder.nbgrader_glue.release_feedback.UnitReleaseFeedback"
    # nbgrader's autograde, however started (formgrader's button too), grades the collect step's copies only,
    # repairs a grade_id that JupyterLab's Split Cell repeated (nbgrader's DeduplicateIds fails the whole student),
    # keeps a bounded share of what the kernel prints (nbgrader's LimitOutput counts lines, after the run), and warns
    # of a locked cell a student changed but not of every honest submission's hidden tests (restore_cells.py says
    # why): its own lists of steps, with these added or put in place
    from nbgrader.converters import Autograde
    from nbgrader.preprocessors import DeduplicateIds, Execute, OverwriteCells

    from autograder.nbgrader_glue.capped_execute import CappedExecute
    from autograder.nbgrader_glue.collected_only import OnlyCollectedCopies
    from autograder.nbgrader_glue.restore_cells import RestoreLockedCells
    from autograder.nbgrader_glue.split_cells import SplitCellIds

    steps = Autograde.class_traits()
    replaced = {OverwriteCells: RestoreLockedCells, DeduplicateIds: SplitCellIds}
    c.Autograde.sanitize_preprocessors = [OnlyCollectedCopies, *(replaced.get(step, step)
                                                                 for step in steps["sanitize_preprocessors"].default())]
    c.Autograde.autograde_preprocessors = [CappedExecute if step is Execute else step
                                           for step in steps["autograde_preprocessors"].default()]


def configure_feedback(c) -> None:
    """What nbgrader's feedback pages (generate_feedback) and formgrader's pages of a submission are made with."""
    # feedback shows each cell's outcome, not the hidden tests' code: neither in the cell nor in its traceback
    # and under every autograded cell the score of record's points and reason, with the student's total at the top
    c.GenerateFeedback.preprocessors = ["nbgrader.preprocessors.GetGrades",
                                        "autograder.nbgrader_glue.feedback.TrustedReasons",
                                        "autograder.nbgrader_glue.feedback.HideHiddenTestTracebacks",
                                        "nbgrader.preprocessors.ClearHiddenTests",
                                        "nbconvert.preprocessors.CSSHTMLHeaderPreprocessor"]
    # formgrader's pages and feedback's render no script a student wrote: outputs cleaned by nbconvert, markdown and
    # raw cells by a preprocessor on the exporter both build (it reads this config)
    c.HTMLExporter.sanitize_html = True
    c.HTMLExporter.preprocessors = ["autograder.nbgrader_glue.inert_html.InertStudentHTML"]
    # each feedback page is made in a unit of its own, of a notebook within the size cap and a budget of JSON values
    # (imported now: its units' modules join the fork server's preload, whichever step of formgrader starts it)
    from autograder.nbgrader_glue import feedback
    c.GenerateFeedback.exporter_class = f"{feedback.__name__}.{feedback.BoundedHTMLExporter.__name__}"


def grading_problem(config) -> str | None:
    """Why nbgrader, with this loaded config, would not run notebooks in the confined grading kernel; None when it
    would. A course's nbgrader_config.py that fails to load (nbgrader then logs the error and goes on with its
    defaults) or that never calls configure_grading would run students' code in a plain kernel, as the grader."""
    if config.Execute.get("kernel_name") != KERNEL_NAME or config.KernelManager.get("transport") != "ipc":
        return ("the course's nbgrader_config.py did not set the confined grading kernel (it failed to load, or does "
                "not call autograder.nbgrader_glue.setup.configure_grading)")
    return None


def course_grading_problem(course: Path) -> str | None:
    """``grading_problem`` for the course folder's own nbgrader_config.py, loaded as nbgrader loads it."""
    from traitlets.config.loader import PyFileConfigLoader

    if not (Path(course) / "nbgrader_config.py").is_file():
        return f"{Path(course) / 'nbgrader_config.py'} not found"
    try:
        config = PyFileConfigLoader("nbgrader_config.py", path=str(course)).load_config()
    except Exception as err:  # what nbgrader would log and skip
        return f"the course's nbgrader_config.py fails to load ({type(err).__name__}: {err})"
    return grading_problem(config)
