"""What a training run says before it trains: its steps, a first guess of its time, and which of the glue's
values the preset replaced. The guess is the preset's measured rate on a 2-core laptop CPU
(``Preset.seconds_per_step``); once the run has trained a few seconds it says its own rate on this machine
(``course_lib.gpt.progress.ProgressLog``), and its progress bar's time left follows it.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from course_lib.gpt.progress import duration
from course_lib.gpt.trainer import TrainerConfig
from course_lib.presets import Preset
from course_lib.run_specs import RUNS

# TrainerConfig fields the glue sets and the grader checks (course_lib.checks): a run names
# those its preset replaces before it starts
GLUE_FIELDS = ("max_epochs", "batch_size", "learning_rate", "lr_decay", "warmup_tokens", "final_tokens", "num_workers")


@dataclass(frozen=True)
class Plan:
    """What a training run will do: how many steps, about how long, and which glue values the preset replaced."""

    name: str  # the run's name
    preset: Preset  # the preset it trains with
    glue: str  # the glue function whose config it trains with ("pretrain" or "finetune")
    epochs: int  # passes over the training set
    batches: int  # steps per epoch
    steps: int  # steps in all (max_steps may stop it before the last epoch ends)
    seconds: float | None  # first guess on a 2-core laptop CPU (None: the preset has no rate)
    replaced: tuple[tuple[str, object, object], ...]  # (field, the glue's value, the run's value)


def plan_of(name: str, returned, config: TrainerConfig, n_examples: int, preset: Preset) -> Plan:
    """The plan of run ``name`` whose glue returned ``returned`` and which trains with ``config`` (the preset's
    overrides applied) on ``n_examples`` examples."""
    glue = RUNS[name].function
    batches = math.ceil(n_examples / config.batch_size)
    steps = batches * config.max_epochs
    if config.max_steps is not None:
        steps = min(steps, config.max_steps)
    rate = preset.seconds_per_step.get(glue)
    replaced = tuple((f, getattr(returned, f, None), getattr(config, f)) for f in GLUE_FIELDS
                     if getattr(returned, f, None) != getattr(config, f))
    return Plan(name, preset, glue, config.max_epochs, batches, steps, None if rate is None else steps * rate, replaced)


def _value(value) -> str:
    if isinstance(value, bool) or value is None:
        return str(value)
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):
        return f"{value:g}"
    return repr(value)[:40]


def plan_lines(plan: Plan, device: str = "cpu") -> list[str]:
    """What a run prints before it trains: its steps and first guess of its time, and which of the glue's values
    the preset replaced.

    ``device`` is the type of device the run trains on: the guess is for a CPU, and says so on a GPU."""
    if plan.steps < plan.epochs * plan.batches:
        shape = f"the {plan.preset.name} preset stops it there"
    else:
        shape = f"{plan.epochs} epoch{'s' * (plan.epochs != 1)} of {plan.batches} batch{'es' * (plan.batches != 1)}"
    when = ""
    if plan.seconds is not None:
        when = f", {duration(plan.seconds)} on a 2-core laptop CPU (a first guess: it measures its own rate as it goes)"
        if device != "cpu":
            when = f", {duration(plan.seconds)} on a 2-core laptop CPU (this run trains on {device}: less)"
    lines = [f"{plan.name}: {plan.steps:,} training steps ({shape}){when}"]
    if plan.replaced:
        changes = ", ".join(f"{f} {_value(mine)} -> {_value(used)}" for f, mine, used in plan.replaced)
        lines += [f"  for this run the {plan.preset.name} preset replaces what your {plan.glue} returned: {changes}",
                  f"  (why: the {plan.preset.name} preset is {plan.preset.description}. Your {plan.glue} is graded on "
                  f"what it returns, so keep the handout's values in it)"]
    return lines
