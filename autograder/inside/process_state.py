"""What a fresh kernel starts with, put back between notebooks that share one grading process.

In Jupyter each notebook has its own kernel, so a line like
``torch.set_default_dtype(torch.float64)`` in 07 or ``os.chdir(...)`` in 06 never reaches the checks
of 02-05. The probe job loads every notebook in one process; before each notebook (and so before its
checks) it restores the process-wide settings an honest notebook changes, as they were before any
student code ran, and forgets the modules imported from the working folder (a helper a notebook
wrote is imported afresh by the next one, from the file as it is then).
"""
from __future__ import annotations

import importlib
import os
import sys
import warnings
from dataclasses import dataclass, field

# numpy.geterr() of a fresh numpy
NUMPY_DEFAULT_ERRORS = {"divide": "warn", "over": "warn", "under": "ignore", "invalid": "warn"}


@dataclass
class ProcessState:
    """The process-wide settings a notebook's cells can leave changed for the next notebook."""

    cwd: str  # the job's folder: relative paths (params, the next notebook) resolve against it
    environ: dict[str, str]  # os.environ
    sys_path: list[str]  # module search path (a cell may prepend its own folder)
    stdout: object  # sys.stdout (a cell may redirect it and not put it back)
    stderr: object  # sys.stderr, likewise
    warning_filters: list  # warnings.filters (simplefilter("error") makes a torch warning fail)
    default_dtype: object  # torch.get_default_dtype()
    grad_enabled: bool  # torch.is_grad_enabled()
    deterministic: tuple[bool, bool]  # torch's deterministic algorithms: (enabled, warn only)
    anomaly: bool  # torch.is_anomaly_enabled()
    threads: int  # torch.get_num_threads()
    default_device: object  # torch.get_default_device()
    numpy_errors: dict = field(default_factory=lambda: dict(NUMPY_DEFAULT_ERRORS))  # numpy.geterr()
    working: str | None = None  # the notebooks' working folder (``working_folder``): its modules are forgotten

    @classmethod
    def taken(cls, working: str | None = None) -> ProcessState:
        """The settings as they are now; ``working``: the notebooks' own folder, whose modules a restore forgets."""
        import torch

        # not imported here: a notebook that never uses numpy does not pay for it
        numpy = sys.modules.get("numpy")
        numpy_errors = numpy.geterr() if numpy is not None else dict(NUMPY_DEFAULT_ERRORS)
        deterministic = (torch.are_deterministic_algorithms_enabled(),
                         torch.is_deterministic_algorithms_warn_only_enabled())
        return cls(os.getcwd(), dict(os.environ), list(sys.path), sys.stdout, sys.stderr, list(warnings.filters),
                   torch.get_default_dtype(), torch.is_grad_enabled(), deterministic,
                   torch.is_anomaly_enabled(), torch.get_num_threads(), torch.get_default_device(), numpy_errors,
                   working)

    def restore(self) -> None:
        """Put every setting back as it was taken."""
        import torch

        if self.working is not None:
            forget_modules_under(self.working)
        os.chdir(self.cwd)
        os.environ.clear()
        os.environ.update(self.environ)
        sys.path[:] = self.sys_path
        sys.stdout, sys.stderr = self.stdout, self.stderr
        warnings.filters[:] = self.warning_filters
        if hasattr(warnings, "_filters_mutated"):
            warnings._filters_mutated()  # drops the decisions cached under the student's filters
        torch.set_default_dtype(self.default_dtype)
        torch.set_grad_enabled(self.grad_enabled)
        # only when a cell changed it: the setter imports torch._inductor and torch._dynamo (slow),
        # which a cell that called it has imported already
        if (torch.are_deterministic_algorithms_enabled(),
                torch.is_deterministic_algorithms_warn_only_enabled()) != self.deterministic:
            torch.use_deterministic_algorithms(self.deterministic[0], warn_only=self.deterministic[1])
        torch.set_anomaly_enabled(self.anomaly)
        if torch.get_num_threads() != self.threads:
            torch.set_num_threads(self.threads)
        # setting it at all installs a mode on every op
        if torch.get_default_device() != self.default_device:
            torch.set_default_device(None if self.default_device == torch.device("cpu") else self.default_device)
        if "numpy" in sys.modules:
            sys.modules["numpy"].seterr(**self.numpy_errors)


def forget_modules_under(folder: str) -> None:
    """Drop from ``sys.modules`` what was imported from files under ``folder`` (a new kernel has not imported
    them), and the import system's cached listings, which may predate a file a cell wrote."""
    prefix = os.path.join(os.path.realpath(folder), "")
    real = _RealPaths()
    for name, module in list(sys.modules.items()):
        try:
            path = module.__dict__.get("__file__")  # the module's own attribute, never its __getattr__
        except Exception:  # not a module: whatever a cell put there
            continue
        if isinstance(path, str) and real.of(path).startswith(prefix):
            del sys.modules[name]
    importlib.invalidate_caches()


class _RealPaths:
    """``os.path.realpath`` of many files, each folder resolved once: torch's thousands of modules lie in a few
    hundred folders, and resolving every path on its own cost a probe job's 7 calls 0.34 CPU-s (0.11 now). A file
    that is itself a link is resolved whole, so the answer is realpath's own."""

    def __init__(self):
        self.folders: dict[str, str] = {}  # folder as written -> its real path

    def of(self, path: str) -> str:
        folder, name = os.path.split(path)
        if not name or name in (".", ".."):
            return os.path.realpath(path)
        if folder not in self.folders:
            self.folders[folder] = os.path.realpath(folder)
        joined = os.path.join(self.folders[folder], name)
        return os.path.realpath(joined) if os.path.islink(joined) else joined
