"""The named runs of the original run.sh, callable from a notebook or the command line.

Each run takes the graded parts (the student's glue, span corruption and
synthesizer) from the notebooks the caller names, applies a preset, and writes
the original file names into ``out_dir``.
"""
from __future__ import annotations

import dataclasses
import json
import math
import time
import types
from dataclasses import dataclass
from pathlib import Path

from torch import nn

from course_lib import layout
from course_lib.contract import ContractError, StudentParts, namespace_of
from course_lib.data_files import read_birth_places, read_text
from course_lib.gpt.checkpoint import load_params
from course_lib.gpt.device import pick_device, seed_everything, set_threads
from course_lib.gpt.evaluation import accuracy, predict_places, write_predictions
from course_lib.gpt.model import GPTConfig
from course_lib.gpt.trainer import TrainerConfig
from course_lib.presets import Preset, get_preset
from course_lib.run_specs import RUNS, RunSpec  # torch-free, for the grader's readers of run files

# file names and default folders are defined once, in course_lib.layout
WIKI, TRAIN, DEV, TEST_INPUTS = layout.WIKI, layout.TRAIN, layout.DEV, layout.TEST_INPUTS
DEFAULT_DATA_DIR, DEFAULT_OUT_DIR = layout.DEFAULT_DATA_DIR, layout.DEFAULT_OUT_DIR


# the parts of the student contract (course_lib.contract) each kind of run calls
REQUIRED = {
    "pretrain": ("CharCorruptionDataset", "pretrain", "train"),
    "finetune": ("finetune", "train"),
    "evaluate": (),
}


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
    seconds: float | None  # estimate on a 2-core laptop CPU (None: the preset has no rate)
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


def duration(seconds: float) -> str:
    """A rough duration for an estimate: "under a minute", "about 6 min", "about 2.5 hours"."""
    if seconds < 60:
        return "under a minute"
    if seconds < 90 * 60:
        return f"about {round(seconds / 60)} min"
    return f"about {seconds / 3600:.1f} hours"


def plan_lines(plan: Plan, device: str = "cpu") -> list[str]:
    """What a run prints before it trains: its steps and time, and which of the glue's values the preset replaced.

    ``device`` is the type of device the run trains on: the time is for a CPU, and says so on a GPU."""
    if plan.steps < plan.epochs * plan.batches:
        shape = f"the {plan.preset.name} preset stops it there"
    else:
        shape = f"{plan.epochs} epoch{'s' * (plan.epochs != 1)} of {plan.batches} batch{'es' * (plan.batches != 1)}"
    when = "" if plan.seconds is None else f", {duration(plan.seconds)} on a 2-core laptop CPU"
    if when and device != "cpu":
        when += f" (this run trains on {device}: less)"
    lines = [f"{plan.name}: {plan.steps:,} training steps ({shape}){when}"]
    if plan.replaced:
        changes = ", ".join(f"{f} {_value(mine)} -> {_value(used)}" for f, mine, used in plan.replaced)
        lines += [f"  for this run the {plan.preset.name} preset replaces what your {plan.glue} returned: {changes}",
                  f"  (why: the {plan.preset.name} preset is {plan.preset.description}. Your {plan.glue} is graded on "
                  f"what it returns, so keep the handout's values in it)"]
    return lines


class RunError(RuntimeError):
    """A run cannot start: unknown name, missing part in the notebooks, or missing input."""


@dataclass
class RunResult:
    """What a run did and wrote."""

    name: str  # the run's name
    preset: str  # preset used
    seconds: float  # wall time
    written: list[str]  # files written, relative to out_dir
    correct: int | None = None  # evaluate runs with gold answers
    total: int | None = None
    history: list[dict] | None = None  # per-step loss (train runs)
    seed: int = 0  # the training's random seed: the grader's audit retrains with it

    @property
    def accuracy(self) -> float | None:
        return None if self.total in (None, 0) else self.correct / self.total


def resolve_parts(notebooks) -> types.ModuleType | types.SimpleNamespace:
    """Graded parts: a loaded module, a notebook's ``globals()``, or notebook paths/folders."""
    return namespace_of(notebooks)


def model_config(preset: Preset, vocab_size: int) -> GPTConfig:
    return GPTConfig(vocab_size, preset.block_size, **preset.model)


def apply_overrides(config: TrainerConfig, overrides: dict, n_examples: int, block_size: int) -> TrainerConfig:
    """The preset's changes to a TrainerConfig; final_tokens="auto" ends the cosine with the run."""
    overrides = dict(overrides)
    if overrides.get("final_tokens") == "auto":
        epochs = overrides.get("max_epochs", config.max_epochs)
        batch = overrides.get("batch_size", config.batch_size)
        steps = epochs * math.ceil(n_examples / batch)
        overrides["final_tokens"] = max(steps * batch * (block_size - 1), overrides.get("warmup_tokens",
                                                                                        config.warmup_tokens) + 1)
        overrides.setdefault("lr_decay", True)
    return dataclasses.replace(config, **overrides)


def build_model(parts, spec: RunSpec, mconf: GPTConfig) -> nn.Module:
    """The variant's model from the notebooks' initialize_*_model (checked to be a torch module)."""
    try:
        return StudentParts(parts).model(spec.variant, mconf)
    except ContractError as err:
        raise RunError(str(err)) from err


def run(name: str, notebooks, preset: str | Preset = layout.DEFAULT_PRESET, data_dir: str | Path = DEFAULT_DATA_DIR,
        out_dir: str | Path = DEFAULT_OUT_DIR, seed: int = 0, device: str = "auto",
        progress: bool = True, num_threads: int | None = None) -> RunResult:
    """Carry out one named run of run.sh; see RUNS for the names. ``seed`` is the training's random seed."""
    if name not in RUNS:
        raise RunError(f"unknown run {name!r}; choose one of: {', '.join(RUNS)}")
    spec = RUNS[name]
    preset = get_preset(preset) if isinstance(preset, str) else preset
    data_dir, out_dir = Path(data_dir), Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    parts = notebooks if isinstance(notebooks, StudentParts) else StudentParts(notebooks)
    try:
        parts.require(REQUIRED[spec.function])
    except ContractError as err:
        raise RunError(f"{err}; run the cells that define them (or name the right notebooks)") from err
    seed_everything(seed)
    set_threads(num_threads)
    start = time.perf_counter()
    # evaluate and finetune need only its vocabulary, so they work before span corruption is written
    pretrain_dataset = parts.dataset_class()(read_text(data_dir / WIKI), preset.block_size)
    model = build_model(parts, spec, model_config(preset, pretrain_dataset.vocab_size))
    result = RunResult(name, preset.name, 0.0, [], seed=seed)
    try:
        if spec.function == "evaluate":
            _evaluate(spec, model, pretrain_dataset, preset, data_dir, out_dir, device, result)
        else:
            settings = dict(seed=seed, device=device, num_threads=num_threads,
                            **({} if progress else {"progress": False}))
            _train(spec, parts, model, pretrain_dataset, preset, data_dir, out_dir, settings, result)
    except ContractError as err:
        raise RunError(str(err)) from err
    result.seconds = time.perf_counter() - start
    log = dataclasses.asdict(result) | {"accuracy": result.accuracy}
    (out_dir / f"{name}.json").write_text(json.dumps(log), encoding="utf-8")
    return result


def _evaluate(spec: RunSpec, model: nn.Module, dataset, preset: Preset, data_dir: Path, out_dir: Path, device: str,
              result: RunResult) -> None:
    """Answer the split's questions with the saved params; score them when the file carries answers."""
    model = load_params(model, out_dir / spec.reads).to(pick_device(device))
    examples = read_birth_places(data_dir / spec.eval_corpus)
    predictions = predict_places(model, dataset.vocab, [e.question for e in examples], preset.eval_batch_size)
    write_predictions(predictions, out_dir / spec.outputs)
    result.written.append(spec.outputs)
    if all(e.place is not None for e in examples):
        result.correct, result.total = accuracy(predictions, [e.place for e in examples])


def _train(spec: RunSpec, parts: StudentParts, model: nn.Module, dataset, preset: Preset, data_dir: Path,
           out_dir: Path, settings: dict, result: RunResult) -> None:
    """The student's pretrain or finetune builds the Trainer; the preset adjusts it; the student's train runs it."""
    if spec.function == "pretrain":
        trainer = parts.pretrain(dataset, preset.block_size, model)
        overrides = preset.pretrain
    else:
        reads = str(out_dir / spec.reads) if spec.reads else None
        if reads and not Path(reads).is_file():
            raise RunError(f"{reads} not found: run the matching *_pretrain run first")
        trainer = parts.finetune(reads, str(data_dir / TRAIN), dataset, preset.block_size, model)
        overrides = preset.finetune_with_pretrain if reads else preset.finetune_without_pretrain
    returned = trainer.config
    trainer.config = apply_overrides(returned, {**settings, **overrides}, len(trainer.train_dataset), preset.block_size)
    plan = plan_of(result.name, returned, trainer.config, len(trainer.train_dataset), preset)
    for line in plan_lines(plan, pick_device(trainer.config.device).type):
        print(line, flush=True)
    writes = out_dir / spec.writes
    writes.unlink(missing_ok=True)  # so a stale file cannot pass for this run's
    parts.train(model, str(writes), trainer)
    if not writes.is_file():
        raise RunError(f"train() did not write {writes}")
    result.written.append(spec.writes)
    result.history = trainer.history
