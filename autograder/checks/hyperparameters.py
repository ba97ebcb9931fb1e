"""The hyperparameters a student's glue chooses, read off the glue checks' outputs, for the audit.

The audit retrains with the course's reference code (``autograder.grading.audit``), so the
student's own choices come from what the probe job already returned: each glue check's probe
sends back the Trainer's config as plain values (``course_lib.checks.glue_train.trainer_fields``). The fields
the checks pin (epochs, batch size, learning rate, schedule, workers) are the handout's when the
check passed, so the reference's values are the student's; ``final_tokens`` was computed on the
check's toy world and is left to the reference, which computes it as the check demands. Taken is
the rest of the optimisation (``FIELDS``), each only when the trainer accepts its value; the
graded preset's overrides still come last, as in the student's own runs. The values come from a
process that ran student code: they only choose hyperparameters, which a student chooses anyway,
and are never more than the types ``FIELDS`` accepts.
"""
from __future__ import annotations

import math

# check whose probe returns a stage's Trainer config -> that stage's course_lib.presets.Preset field
STAGES = {"02-glue-config": "finetune_without_pretrain", "02-glue-pretrained": "finetune_with_pretrain",
          "04-pretrain-config": "pretrain"}
# more would only slow the audit: the trainer regroups that many batches at once
MAX_LENGTH_BUCKETS = 64


def _fraction(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and 0.0 <= value < 1.0


def _positive(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value) and value > 0


def _count(value, top: int | None = None) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 1 and (top is None or value <= top)


# TrainerConfig fields left to the student that change what training computes -> whether the trainer
# takes a value (device, threads, workers, paths, progress and speed switches are the grader's)
FIELDS = {
    "betas": lambda v: isinstance(v, (list, tuple)) and len(v) == 2 and all(_fraction(b) for b in v),
    "grad_norm_clip": _positive,
    "weight_decay": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool) and 0.0 <= v <= 100.0,
    "decay_matrices_only": lambda v: isinstance(v, bool),
    "shuffle": lambda v: isinstance(v, bool),
    "length_buckets": lambda v: _count(v, MAX_LENGTH_BUCKETS),
    "max_steps": lambda v: v is None or _count(v),
}


def of_stage(config) -> tuple[dict, list[str]]:
    """The fields of one Trainer config (a probe's raw ``trainer_config``) the audit trains with;
    the fields left out because the trainer does not take their value."""
    if not isinstance(config, dict):
        return {}, []
    taken, refused = {}, []
    for name, valid in FIELDS.items():
        if name not in config:
            continue
        value = config[name]
        if valid(value):
            taken[name] = tuple(float(b) for b in value) if name == "betas" else value
        else:
            refused.append(name)
    return taken, refused


def from_outputs(outputs: dict) -> tuple[dict[str, dict], list[str]]:
    """stage -> the student's fields, from the raw outputs of the glue checks that passed
    (grade_id -> output); notes on what was left out, for the instructor's log."""
    stages, notes = {}, []
    for grade_id, stage in STAGES.items():
        output = outputs.get(grade_id)
        if not isinstance(output, dict):
            continue
        taken, refused = of_stage(output.get("trainer_config"))
        stages[stage] = taken
        if refused:
            notes.append(f"{grade_id}: not taken into the audit's retraining (not a value the trainer takes): "
                         f"{', '.join(refused)}")
    return stages, notes
