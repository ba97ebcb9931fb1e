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

# its spec: autograder/nbgrader_glue/jupyter/kernels/course-grading/kernel.json
KERNEL_NAME = "course-grading"
KERNELS_ROOT = Path(__file__).resolve().parent / "jupyter"
# nbgrader's Autograde steps in order, the course's in place of three (each file says why), the
# collected-copies guard first; tests/autograder/nbgrader_glue/test_setup.py checks them
SANITIZE_STEPS = [
    "autograder.nbgrader_glue.collected_only.OnlyCollectedCopies",
    "nbgrader.preprocessors.ClearOutput",
    "autograder.nbgrader_glue.split_cells.SplitCellIds",  # for DeduplicateIds
    "nbgrader.preprocessors.OverwriteKernelspec",
    "autograder.nbgrader_glue.restore_cells.RestoreLockedCells",  # for OverwriteCells
    "nbgrader.preprocessors.CheckCellMetadata",
]
AUTOGRADE_STEPS = [
    "autograder.nbgrader_glue.capped_execute.CappedExecute",  # for Execute
    "nbgrader.preprocessors.IgnorePattern",
    "nbconvert.preprocessors.ClearMetadataPreprocessor",
    "nbgrader.preprocessors.LimitOutput",
    "nbgrader.preprocessors.SaveAutoGrades",
    "nbgrader.preprocessors.AssignLatePenalties",
    "nbgrader.preprocessors.CheckCellMetadata",
]


def configure_grading(c, timeout: int = 120, memory_mb: int = 4096, cpu_seconds: int = 1800,
                      hidden_paths: list[str | Path] = (), readable_paths: list[str | Path] = ()) -> None:
    """Execute every notebook (validate, autograde) in the confined kernel (``kernel``).

    The kernel sees an allowlist (its notebook's folder, the course library, the
    data folders), so nothing needs hiding: ``hidden_paths`` is ignored.
    ``readable_paths`` are extra data folders it may read.
    """
    # nbgrader run as root in the course folder (docs/hub.md allows `nbgrader export`) gives its
    # files back to the instructor, as `python -m autograder` does: else they meet root's files
    from autograder.ownership import given_back_at_exit

    given_back_at_exit()
    # a gradebook this process creates is stamped without nbgrader's `alembic` subprocess
    from autograder.exports.gradebook_engine import reuse_engines
    from autograder.exports.gradebook_stamp import stamp_in_process

    stamp_in_process()
    # every gradebook nbgrader opens in this process through one engine: each query compiled once
    reuse_engines()
    if hidden_paths:
        warnings.warn("configure_grading(hidden_paths=...) is ignored: the grading kernel sees only an allowlist",
                      DeprecationWarning, stacklevel=2)
    paths = [str(KERNELS_ROOT), *filter(None, os.environ.get("JUPYTER_PATH", "").split(os.pathsep))]
    os.environ["JUPYTER_PATH"] = os.pathsep.join(dict.fromkeys(paths))
    # the kernel reads its limits from the environment it inherits
    os.environ["GRADING_MEMORY_MB"] = str(memory_mb)
    os.environ["GRADING_CPU_SECONDS"] = str(cpu_seconds)
    # set by autograder autograde
    given = [p for p in os.environ.get("GRADING_READABLE_PATHS", "").split(os.pathsep) if p]
    os.environ["GRADING_READABLE_PATHS"] = os.pathsep.join(dict.fromkeys(
        [*given, *(str(Path(p).resolve()) for p in readable_paths)]))
    os.environ.pop("GRADING_HIDDEN_PATHS", None)
    # unix sockets: ZMQ over TCP cannot reach a kernel in its own network namespace
    c.KernelManager.transport = "ipc"
    # in a folder of this process's own: jupyter_client names socket files by what is free, so
    # parallel nbgrader processes in one course folder (autograde --workers) could collide
    sockets = tempfile.mkdtemp(prefix="nbgrader-sockets-")
    atexit.register(shutil.rmtree, sockets, True)
    c.KernelManager.ip = os.path.join(sockets, "kernel")
    c.Execute.kernel_name = KERNEL_NAME
    c.Execute.timeout = timeout  # seconds per cell; a cell past it is interrupted and scores zero
    c.Execute.interrupt_on_timeout = True
    # above nbclient's 60 s: a student's first kernel also starts the sandbox, slow on a busy
    # machine; the student's own time limit still bounds it
    c.Execute.startup_timeout = 180
    configure_feedback(c)
    # collect takes a submission only from its owner's account, a unit per student, links as links
    # (the collect step drops them); what it refuses goes to the course's collect_refused.csv
    c.ExchangeFactory.collect = "autograder.nbgrader_glue.exchange.OwnedCollect"
    # collect takes a student's later submission over the one collected before, as formgrader's button does
    # (nbgrader's `--update`); the command says which time it took
    c.ExchangeCollect.update = True
    # release_feedback hands out each student's pages in a unit: a missing secret stops nobody else
    c.ExchangeFactory.release_feedback = "autograder.nbgrader_glue.release_feedback.UnitReleaseFeedback"
    # late work: nbgrader's autograde asks the course's plugin for each notebook's penalty, set by the typed
    # settings c.CourseLatePenalty.* (autograder/term/late.py); export recomputes it from the points as they stand
    c.AssignLatePenalties.plugin_class = "autograder.term.late.CourseLatePenalty"
    c.ExportApp.plugin_class = "autograder.nbgrader_glue.export.CourseExport"
    # nbgrader zip_collect reads an LMS's download with the course's file names and opens zips safely
    c.ZipCollectApp.collector_plugin = "autograder.term.lms.LmsFileNames"
    c.ZipCollectApp.extractor_plugin = "autograder.term.lms_zip_collect.SafeExtractor"
    # autograde, however started (formgrader's button too), grades the collect step's copies only
    c.Autograde.sanitize_preprocessors = SANITIZE_STEPS
    c.Autograde.autograde_preprocessors = AUTOGRADE_STEPS


def configure_feedback(c) -> None:
    """How nbgrader's feedback pages (generate_feedback) and formgrader's pages are made."""
    # feedback shows each cell's outcome, never hidden tests' code (in the cell or its traceback);
    # under each autograded cell, the score of record's points and reason; the total on top
    c.GenerateFeedback.preprocessors = ["nbgrader.preprocessors.GetGrades",
                                        "autograder.nbgrader_glue.feedback.TrustedReasons",
                                        "autograder.nbgrader_glue.feedback.HideHiddenTestTracebacks",
                                        "nbgrader.preprocessors.ClearHiddenTests",
                                        "nbconvert.preprocessors.CSSHTMLHeaderPreprocessor"]
    # formgrader's and feedback's pages run no script a student wrote: outputs cleaned by nbconvert,
    # markdown and raw cells by a preprocessor on the exporter both build (it reads this config)
    c.HTMLExporter.sanitize_html = True
    c.HTMLExporter.preprocessors = ["autograder.nbgrader_glue.inert_html.InertStudentHTML"]
    # each feedback page is made in a unit, of a notebook within the size cap and JSON value budget;
    # imported now so its modules join the fork server's preload, whichever step starts it
    from nbgrader.converters import GenerateFeedback

    from autograder.nbgrader_glue import feedback
    c.GenerateFeedback.exporter_class = f"{feedback.__name__}.{feedback.BoundedHTMLExporter.__name__}"
    # generate_feedback (the command and formgrader's button) ends naming each student it could not serve
    if not getattr(GenerateFeedback.convert_notebooks, "course_summary", False):
        GenerateFeedback.convert_notebooks = feedback.with_summary(GenerateFeedback.convert_notebooks)


def grading_problem(config) -> str | None:
    """Why nbgrader, with this loaded config, would not run notebooks in the confined kernel (None
    if it would). A nbgrader_config.py that fails to load (nbgrader logs it, goes on with defaults)
    or never calls configure_grading would run students' code in a plain kernel, as the grader."""
    if config.Execute.get("kernel_name") != KERNEL_NAME or config.KernelManager.get("transport") != "ipc":
        return ("the course's nbgrader_config.py did not set the confined grading kernel (it failed to load, or does "
                "not call autograder.nbgrader_glue.setup.configure_grading)")
    return None


def course_grading_problem(course: Path) -> str | None:
    """``grading_problem`` for the course's own nbgrader_config.py, loaded as nbgrader loads it."""
    from traitlets.config.loader import PyFileConfigLoader

    if not (Path(course) / "nbgrader_config.py").is_file():
        return f"{Path(course) / 'nbgrader_config.py'} not found"
    try:
        config = PyFileConfigLoader("nbgrader_config.py", path=str(course)).load_config()
    except Exception as err:  # what nbgrader would log and skip
        return f"the course's nbgrader_config.py fails to load ({type(err).__name__}: {err})"
    from autograder.term.late import policy_problem

    return grading_problem(config) or policy_problem(config)
