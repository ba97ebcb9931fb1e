"""Confinement: run untrusted code in a sandbox that sees an allowlist and dies whole.

Owns the sandbox's command line (``sandbox``: bubblewrap and setpriv), its cgroups
(``cgroups``), process limits (``isolation``), what a job may use (``limits``), and running
one job and reading its answer back (``jobs``). The code that runs *inside* is
``autograder.inside``. May import course_lib (the paths it binds) and ``autograder.inside`` (the
wire a job's answer comes back on), nothing else of the grader: every grading step (grading,
nbgrader's kernel, the audit) builds on it.
"""
from autograder.confinement.cgroups import CGROUP_PARENT, CGROUP_ROOT, Cgroup, cgroup_layout, remove_orphans
from autograder.confinement.limits import Limits
from autograder.confinement.sandbox import COURSE_LIB, NOBODY, Mounts, bwrap_argv, python_paths, status

__all__ = ["CGROUP_PARENT", "CGROUP_ROOT", "COURSE_LIB", "NOBODY", "Cgroup", "Limits", "Mounts", "bwrap_argv",
           "cgroup_layout", "python_paths", "remove_orphans", "status"]
