"""Tests for course_lib/runs/plan.py: what a training run says before it trains."""
from __future__ import annotations


def _handout_plan(preset_name: str, name: str = "vanilla_pretrain", n: int = 481):
    from course_lib.checks.glue import PRETRAIN_HANDOUT
    from course_lib.gpt.trainer import TrainerConfig
    from course_lib.presets import get_preset
    from course_lib.runs import apply_overrides, plan_of

    preset = get_preset(preset_name)
    returned = TrainerConfig(**PRETRAIN_HANDOUT, final_tokens=200 * n * 128)
    return plan_of(name, returned, apply_overrides(returned, preset.pretrain, n, preset.block_size), n, preset)


def test_a_run_says_its_steps_time_and_what_the_preset_replaced():
    """Does a cpu run say its steps and time, then each glue value the preset replaced (handout -> preset), and
    why?"""
    from course_lib.runs import plan_lines

    first, replaced, why = plan_lines(_handout_plan("cpu"))
    assert first == ("vanilla_pretrain: 9,300 training steps (300 epochs of 31 batches), about 4 min on a 2-core "
                     "laptop CPU (a first guess: it measures its own rate as it goes)")
    assert replaced.startswith("  for this run the cpu preset replaces what your pretrain returned: max_epochs 650 -> "
                               "300, batch_size 128 -> 16, learning_rate 0.006 -> 0.002")
    assert "num_workers 4 -> 0" in replaced and "lr_decay" not in replaced  # only what changed
    assert "laptop" in why and "graded on what it returns" in why


def test_the_handout_preset_replaces_nothing_of_the_glue():
    """With the gpu preset (the handout's hyperparameters), does a run print its steps and no replacement?"""
    from course_lib.runs import plan_lines

    plan = _handout_plan("gpu")
    assert plan.replaced == () and plan.steps == 650 * 4
    assert len(plan_lines(plan)) == 1
