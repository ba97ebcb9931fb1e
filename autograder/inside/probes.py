"""Probes: apply a student's parts to the grader's inputs and return what came out, raw.

Each probe takes the student's loaded parts and the inputs the grader chose
for this grading, and returns plain values and tensors. It decides nothing:
the judges (course_lib.checks, autograder.checks.hidden, autograder.checks.twins)
verify every output in the grader's own process. The probes of 02-05 are
course_lib's (``course_lib.checks``), the same code a notebook's test cell runs.
"""
from __future__ import annotations

from course_lib.checks.glue import finetune_config_probe, finetune_pretrained_probe, pretrain_config_probe
from course_lib.checks.span import span_probe
from course_lib.checks.synth import synthesizer_model_probe, synthesizer_probe


def variables(parts, inputs: dict) -> dict:
    """Named values the notebook defines (numeric twins), and calls of named functions."""
    out = {name: getattr(parts, name) for name in inputs.get("names", [])}
    for name, calls in inputs.get("calls", {}).items():
        out[name] = [getattr(parts, name)(*args) for args in calls]
    return out


PROBES = {f.__name__: f for f in (finetune_config_probe, finetune_pretrained_probe, pretrain_config_probe, span_probe,
                                  synthesizer_probe, synthesizer_model_probe, variables)}
