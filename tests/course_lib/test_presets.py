
import pytest

from course_lib.gpt.trainer import TrainerConfig
from course_lib.presets import PRESETS, get_preset
from course_lib.runs import apply_overrides, model_config


def test_gpu_preset_is_exactly_the_handout():
    """Does the gpu preset change nothing: the SPEC model and the student's hyperparameters as returned?"""
    gpu = get_preset("gpu")
    assert gpu.block_size == 128 and gpu.model == {}
    assert gpu.pretrain == {} and gpu.finetune_with_pretrain == {} and gpu.finetune_without_pretrain == {}
    config = model_config(gpu, 256)
    assert (config.n_layer, config.n_head, config.n_embd, config.attn_pdrop) == (4, 8, 256, 0.1)


def test_every_preset_builds_valid_configs():
    """Does every preset give a valid GPTConfig and TrainerConfigs for all three stages?"""
    for preset in PRESETS.values():
        model_config(preset, 70)
        for stage in (preset.pretrain, preset.finetune_without_pretrain, preset.finetune_with_pretrain):
            apply_overrides(TrainerConfig(lr_decay=True, warmup_tokens=10, final_tokens=10**9), stage, 500,
                            preset.block_size)


def test_auto_final_tokens_ends_the_cosine_with_the_run():
    """Does final_tokens="auto" put the 10% floor at the run's last step?"""
    config = apply_overrides(TrainerConfig(lr_decay=True, warmup_tokens=10, final_tokens=10**9),
                             dict(max_epochs=3, batch_size=16, final_tokens="auto"), n_examples=100, block_size=64)
    assert config.final_tokens == 3 * 7 * 16 * 63


def test_unknown_preset_lists_the_choices():
    """Does an unknown preset name list the valid ones?"""
    with pytest.raises(ValueError, match="cpu"):
        get_preset("tpu")


def test_gpu_fast_changes_only_how_steps_are_computed():
    """Does gpu-fast keep every graded hyperparameter and switch on only the fast paths?"""
    fast = get_preset("gpu-fast")
    assert fast.model == {} and fast.block_size == 128
    for stage in (fast.pretrain, fast.finetune_with_pretrain, fast.finetune_without_pretrain):
        assert set(stage) == {"fused_adamw", "autocast_bf16", "trim_padding"}


def test_cpu_handout_keeps_the_handout_and_switches_cpu_paths():
    """Does cpu-handout keep the SPEC's model and hyperparameters, switching on only the CPU fast paths?"""
    handout = get_preset("cpu-handout")
    assert handout.model == {"fast_dropout": True} and handout.block_size == 128
    config = model_config(handout, 256)
    assert (config.n_layer, config.n_head, config.n_embd, config.attn_pdrop) == (4, 8, 256, 0.1)
    for stage in (handout.pretrain, handout.finetune_with_pretrain, handout.finetune_without_pretrain):
        assert set(stage) == {"trim_padding", "keep_freed_memory", "fused_adamw", "num_workers"}


def test_overrides_change_one_copy_only():
    """Does --set style overriding change the named fields of a copy, leave the original, and reject bad keys?"""
    from course_lib.presets import with_overrides

    base = get_preset("cpu-original")
    changed = with_overrides(base, ["model.n_embd=256", "all.autocast_bf16=True", "pretrain.max_epochs=260"])
    assert changed.model["n_embd"] == 256 and changed.pretrain["max_epochs"] == 260
    assert all(stage["autocast_bf16"] is True for stage in
               (changed.pretrain, changed.finetune_with_pretrain, changed.finetune_without_pretrain))
    assert base.model["n_embd"] == 128 and "autocast_bf16" not in base.pretrain
    assert changed.name.startswith("cpu-original+")
    with pytest.raises(ValueError, match="SECTION.FIELD=VALUE"):
        with_overrides(base, ["n_embd=256"])
    with pytest.raises(ValueError, match="pretrain has no field 'batchsize'"):
        with_overrides(base, ["pretrain.batchsize=8"])
    with pytest.raises(ValueError, match="model has no field 'n_layers'"):
        with_overrides(base, ["model.n_layers=8"])
