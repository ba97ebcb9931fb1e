"""Which training runs make each run part's params, and the run logs that record their random seeds.

A run part is graded on one params file (``run_files.RUN_PARTS``); the named runs of
``course_lib.run_specs`` say which run writes it and what that run reads, back to the first
training run. The audit retrains that chain, with the seeds the chain's run logs record.
"""
from __future__ import annotations

from autograder.checks.run_files import RUN_PARTS, RunPart
from course_lib.run_specs import RUNS


def training_chain(part: RunPart) -> tuple[str, ...]:
    """The training runs that make a run part's params, in order (pretraining before finetune)."""
    writes = {spec.writes: name for name, spec in RUNS.items() if spec.writes}
    chain, params = [], part.params
    while params in writes:
        name = writes[params]
        chain.insert(0, name)
        params = RUNS[name].reads
    return tuple(chain)


CHAINS = {p.name: training_chain(p) for p in RUN_PARTS}
