"""The hyperparameters the audit retrains with: the glue's own choices, read off its checks' outputs, within bounds."""
from __future__ import annotations

import random
import types

import pytest

from autograder.checks import hyperparameters
from autograder.checks.registry import BY_ID
from autograder.inside.job import _with_hyperparameters
from course_lib.checks.glue import pretrain_config_probe
from course_lib.gpt.trainer import Trainer, TrainerConfig
from course_lib.presets import get_preset


def _pretrain(pretrain_dataset, block_size, model, pretrain_lr=6e-3):
    """The handout's pretraining glue with weight decay and betas of the student's own."""
    tconf = TrainerConfig(max_epochs=650, batch_size=128, learning_rate=pretrain_lr, lr_decay=True,
                          warmup_tokens=512 * 20, final_tokens=200 * len(pretrain_dataset) * block_size, num_workers=4,
                          weight_decay=0.05, betas=(0.8, 0.99))
    return tconf, Trainer(model, pretrain_dataset, None, tconf)


def test_the_glue_own_choices_are_read_off_a_passed_check():
    """Do a pretrain glue's own weight decay and betas, returned by its check's probe, become the pretraining stage's
    hyperparameters (and the fields the checks pin stay out)?"""
    check = BY_ID["04-pretrain-config"]
    inputs = check.inputs(random.Random(3))
    output = pretrain_config_probe(types.SimpleNamespace(pretrain=_pretrain), inputs)
    assert check.judge(inputs, output) == []  # the check passes: the handout's pinned values are there
    stages, notes = hyperparameters.from_outputs({"04-pretrain-config": output})
    assert stages["pretrain"]["weight_decay"] == 0.05 and stages["pretrain"]["betas"] == (0.8, 0.99)
    assert not {"learning_rate", "max_epochs", "final_tokens", "num_workers", "device"} & set(stages["pretrain"])
    assert notes == []


@pytest.mark.parametrize("field, value", [("betas", [0.9, 1.5]), ("betas", "(0.9, 0.95)"), ("weight_decay", "nan"),
                                          ("weight_decay", True), ("grad_norm_clip", 0), ("length_buckets", 10 ** 9),
                                          ("max_steps", -1), ("shuffle", 1)])
def test_a_value_the_trainer_cannot_take_is_left_out_and_said(field, value):
    """Is a field whose value the trainer would not take (out of range, of another type) left to the reference, with
    a note naming the field?"""
    config = {"decay_matrices_only": True, field: value}
    stages, notes = hyperparameters.from_outputs({"02-glue-config": {"trainer_config": config}})
    assert stages["finetune_without_pretrain"] == {"decay_matrices_only": True}
    assert len(notes) == 1 and notes[0].endswith(field)


def test_the_preset_overrides_the_glue_choices_as_in_the_student_runs():
    """Does the audit's preset take the student's fields under each stage, with the preset's own overrides winning?"""
    cpu = get_preset("cpu")
    chosen = {"pretrain": {"weight_decay": 0.05, "betas": [0.8, 0.99], "shuffle": False}}
    preset = _with_hyperparameters(cpu, chosen)
    assert preset.pretrain["weight_decay"] == 0.05 and preset.pretrain["betas"] == (0.8, 0.99)
    assert preset.pretrain["shuffle"] is True  # the cpu preset shuffles, whatever the glue said
    assert preset.finetune_with_pretrain == cpu.finetune_with_pretrain
