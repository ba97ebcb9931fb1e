"""The named runs of the original run.sh, callable from a notebook or the command line: ``carry_out`` does one
(kept once done, resumed from its checkpoint when stopped), ``plan`` says what it will do before it trains,
``record`` is its log."""
from __future__ import annotations

from course_lib.gpt.progress import duration
from course_lib.run_specs import RUNS, RunSpec
from course_lib.runs.carry_out import (
    DEFAULT_DATA_DIR,
    DEFAULT_OUT_DIR,
    DEV,
    REQUIRED,
    TEST_INPUTS,
    TRAIN,
    WIKI,
    RunError,
    apply_overrides,
    build_model,
    code_prints,
    model_config,
    resolve_parts,
    run,
)
from course_lib.runs.plan import GLUE_FIELDS, Plan, plan_lines, plan_of
from course_lib.runs.record import RunResult

__all__ = ["DEFAULT_DATA_DIR", "DEFAULT_OUT_DIR", "DEV", "GLUE_FIELDS", "REQUIRED", "RUNS", "TEST_INPUTS", "TRAIN",
           "WIKI", "Plan", "RunError", "RunResult", "RunSpec", "apply_overrides", "build_model", "code_prints",
           "duration", "model_config", "plan_lines", "plan_of", "resolve_parts", "run"]
