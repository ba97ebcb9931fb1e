"""Named training presets: the SPEC's hyperparameters for GPUs, scaled ones for CPUs.

A preset never changes what the student's glue returns; the runs apply its
overrides to the returned TrainerConfig just before training, so the graded
hyperparameters are always the SPEC's and ``gpu`` trains with them unchanged.

``cpu`` is sized for a 2-core laptop and the synthetic world: a small model without
dropout, small shuffled batches trimmed to their longest example, and a schedule
whose cosine ends with the run ("auto") instead of at the GPU run's final_tokens.
Small batches at a modest rate memorise the world's facts in far fewer epochs than
large ones (benchmarks/FINDINGS.md, "The synthetic world"). ``cpu-handout`` computes
the SPEC's hyperparameters faster on a CPU: dropout masks drawn cheaply (same rates,
another random stream), glibc keeping freed memory, trimmed padding, fused AdamW
(rows of benchmarks/train_throughput.py), and no loader workers competing with the
compute threads.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Preset:
    """How big the model is and how long each stage trains."""

    name: str  # what the command line calls it
    description: str  # one line for `course_lib presets` and --help
    block_size: int = 128  # model and dataset block size
    model: dict[str, Any] = field(default_factory=dict)  # GPTConfig overrides
    pretrain: dict[str, Any] = field(default_factory=dict)  # TrainerConfig overrides (pretraining)
    finetune_without_pretrain: dict[str, Any] = field(default_factory=dict)  # ... (from scratch)
    finetune_with_pretrain: dict[str, Any] = field(default_factory=dict)  # ... (pretrained model)
    eval_batch_size: int = 256  # questions decoded together
    # seconds per step on a 2-core laptop CPU, by stage (benchmarks/step_rate.py): the runs print it
    # times their steps as an estimate (course_lib.runs.plan_lines); a stage without one gets none
    seconds_per_step: dict[str, float] = field(default_factory=dict)


# cpu: small batches at a modest rate memorise the world in far fewer epochs (module docstring)
_CPU_MODEL = dict(n_layer=2, n_head=4, n_embd=128, embd_pdrop=0.0, resid_pdrop=0.0, attn_pdrop=0.0)
_CPU_COMMON = dict(num_workers=0, shuffle=True, trim_padding=True, final_tokens="auto", batch_size=16)

# gpu-fast: the same hyperparameters as gpu; only how each step is computed changes
# (SDPA attention is the default everywhere; fused AdamW runs on CUDA and CPUs)
_GPU_FAST = dict(fused_adamw=True, autocast_bf16=True, trim_padding=True)

# cpu-handout: the SPEC's hyperparameters, computed faster on a CPU (module docstring)
_CPU_HANDOUT = dict(trim_padding=True, keep_freed_memory=True, fused_adamw=True, num_workers=0)

_SMOKE_STAGE = dict(num_workers=0, max_epochs=1, batch_size=32, max_steps=4, progress=False)

CPU = Preset(
    name="cpu",
    description="scaled to train on a 2-core laptop CPU in minutes",
    model=_CPU_MODEL,
    pretrain=dict(_CPU_COMMON, max_epochs=300, learning_rate=2e-3, warmup_tokens=20_000),
    finetune_without_pretrain=dict(_CPU_COMMON, max_epochs=20, learning_rate=6e-4, warmup_tokens=2_000),
    finetune_with_pretrain=dict(_CPU_COMMON, max_epochs=12, learning_rate=2e-4, warmup_tokens=2_000),
    seconds_per_step=dict(pretrain=0.025, finetune=0.014),
)
# the same recipe with fewer epochs: the original corpus is ~6x the default world
CPU_ORIGINAL = dataclasses.replace(
    CPU, name="cpu-original",
    description="the cpu recipe with epochs sized for the original 2,938-document corpus (~30 min on 2 cores)",
    pretrain=dict(CPU.pretrain, max_epochs=150),
    seconds_per_step=dict(pretrain=0.035, finetune=0.017),  # longer documents: fuller batches
)

PRESETS: dict[str, Preset] = {
    p.name: p
    for p in [
        Preset(
            name="gpu",
            description="exactly the SPEC's model and hyperparameters (hours on a GPU)",
        ),
        Preset(
            name="gpu-fast",
            description="the SPEC's model and hyperparameters, with fused AdamW, bf16 autocast and trimmed padding "
                        "on CUDA",
            pretrain=_GPU_FAST,
            finetune_without_pretrain=_GPU_FAST,
            finetune_with_pretrain=_GPU_FAST,
        ),
        Preset(
            name="cpu-handout",
            description="the SPEC's model and hyperparameters on a CPU (many hours): trimmed padding, "
                        "cheap dropout masks, reused memory, fused AdamW",
            model=dict(fast_dropout=True),
            pretrain=_CPU_HANDOUT,
            finetune_without_pretrain=_CPU_HANDOUT,
            finetune_with_pretrain=_CPU_HANDOUT,
            seconds_per_step=dict(pretrain=1.1, finetune=0.95),
        ),
        CPU,
        CPU_ORIGINAL,
        Preset(
            name="smoke",
            description="seconds: a tiny model and a few steps, for tests",
            block_size=64,
            model=dict(n_layer=1, n_head=2, n_embd=32, embd_pdrop=0.0, resid_pdrop=0.0, attn_pdrop=0.0),
            pretrain=_SMOKE_STAGE,
            finetune_without_pretrain=_SMOKE_STAGE,
            finetune_with_pretrain=_SMOKE_STAGE,
            eval_batch_size=512,
        ),
    ]
}


_OVERRIDABLE = ("model", "pretrain", "finetune_without_pretrain", "finetune_with_pretrain")


def with_overrides(preset: Preset, settings: list[str]) -> Preset:
    """A copy of ``preset`` with ``SECTION.FIELD=VALUE`` settings applied (``run --set``, benchmarks).

    SECTION is one of model, pretrain, finetune_without_pretrain, finetune_with_pretrain
    or ``all`` (the three training stages); VALUE is a Python literal or a bare string.
    """
    import ast

    from course_lib.gpt.model import GPTConfig
    from course_lib.gpt.trainer import TrainerConfig

    changed = {section: dict(getattr(preset, section)) for section in _OVERRIDABLE}
    for setting in settings:
        key, sep, text = setting.partition("=")
        section, dot, name = key.partition(".")
        if not sep or not dot or not name or section not in (*_OVERRIDABLE, "all"):
            raise ValueError(f"bad setting {setting!r}: write SECTION.FIELD=VALUE with SECTION one of "
                             f"{', '.join((*_OVERRIDABLE, 'all'))}")
        known = {f.name for f in dataclasses.fields(GPTConfig if section == "model" else TrainerConfig)}
        if name not in known:  # caught here, not as a TypeError when the stage starts
            raise ValueError(f"bad setting {setting!r}: {section} has no field {name!r}; "
                             f"it has {', '.join(sorted(known))}")
        try:
            value = ast.literal_eval(text)
        except (ValueError, SyntaxError):
            value = text
        for target in (_OVERRIDABLE[1:] if section == "all" else (section,)):
            changed[target][name] = value
    suffix = "+" + ",".join(settings) if settings else ""
    return dataclasses.replace(preset, name=preset.name + suffix, **changed)


def get_preset(name: str) -> Preset:
    try:
        return PRESETS[name]
    except KeyError:
        raise ValueError(f"unknown preset {name!r}; choose one of {sorted(PRESETS)}") from None
