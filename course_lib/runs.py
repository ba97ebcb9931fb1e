"""The named runs of the seed's run.sh, callable from a notebook or the command line.

Each run takes the graded parts (the student's glue, span corruption and
synthesizer) from the notebooks the caller names, applies a preset, and writes
the seed's file names into ``out_dir``.
"""
from __future__ import annotations

import dataclasses
import json
import math
import time
import types
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from torch import nn

from .checkpoint import load_params
from .datasets import CharCorruptionDatasetBase
from .data_files import read_birth_places, read_text
from .device import pick_device, seed_everything, set_threads
from .evaluation import accuracy, predict_places, write_predictions
from .model import GPTConfig
from .notebook_loader import load_notebooks, notebook_paths
from .presets import Preset, get_preset
from .trainer import Trainer, TrainerConfig

WIKI = "wiki.txt"
TRAIN = "birth_places_train.tsv"
DEV = "birth_dev.tsv"
TEST_INPUTS = "birth_test_inputs.tsv"
DEFAULT_DATA_DIR = Path("data/world")
# the original course files, where this repo expects them: ../shared beside the checkout (benchmarks' default)
ORIGINAL_DATA_DIR = Path(__file__).resolve().parents[2] / "shared" / "data" / "cs224n_a5"
DEFAULT_OUT_DIR = Path("outputs")


@dataclass(frozen=True)
class RunSpec:
    """One line of the seed's run.sh."""

    function: str  # "pretrain", "finetune" or "evaluate"
    variant: str  # "vanilla" or "synthesizer"
    writes: str | None = None  # params file written (train runs)
    reads: str | None = None  # params file read (finetune after pretraining, evaluate)
    eval_corpus: str | None = None  # questions to answer (evaluate)
    outputs: str | None = None  # predictions file written (evaluate)


RUNS: dict[str, RunSpec] = {
    "vanilla_finetune_without_pretrain": RunSpec("finetune", "vanilla", writes="vanilla.model.params"),
    "vanilla_eval_dev_without_pretrain": RunSpec(
        "evaluate", "vanilla", reads="vanilla.model.params", eval_corpus=DEV, outputs="vanilla.nopretrain.dev.predictions"),
    "vanilla_eval_test_without_pretrain": RunSpec(
        "evaluate", "vanilla", reads="vanilla.model.params", eval_corpus=TEST_INPUTS,
        outputs="vanilla.nopretrain.test.predictions"),
    "vanilla_pretrain": RunSpec("pretrain", "vanilla", writes="vanilla.pretrain.params"),
    "vanilla_finetune_with_pretrain": RunSpec(
        "finetune", "vanilla", reads="vanilla.pretrain.params", writes="vanilla.finetune.params"),
    "vanilla_eval_dev_with_pretrain": RunSpec(
        "evaluate", "vanilla", reads="vanilla.finetune.params", eval_corpus=DEV, outputs="vanilla.pretrain.dev.predictions"),
    "vanilla_eval_test_with_pretrain": RunSpec(
        "evaluate", "vanilla", reads="vanilla.finetune.params", eval_corpus=TEST_INPUTS,
        outputs="vanilla.pretrain.test.predictions"),
    "synthesizer_pretrain": RunSpec("pretrain", "synthesizer", writes="synthesizer.pretrain.params"),
    "synthesizer_finetune_with_pretrain": RunSpec(
        "finetune", "synthesizer", reads="synthesizer.pretrain.params", writes="synthesizer.finetune.params"),
    "synthesizer_eval_dev_with_pretrain": RunSpec(
        "evaluate", "synthesizer", reads="synthesizer.finetune.params", eval_corpus=DEV,
        outputs="synthesizer.pretrain.dev.predictions"),
    "synthesizer_eval_test_with_pretrain": RunSpec(
        "evaluate", "synthesizer", reads="synthesizer.finetune.params", eval_corpus=TEST_INPUTS,
        outputs="synthesizer.pretrain.test.predictions"),
}

# what each graded name in the notebooks must be
REQUIRED = {
    "pretrain": ("CharCorruptionDataset", "pretrain", "train"),
    "finetune": ("finetune", "train"),
    "evaluate": (),
}
VARIANT_INIT = {"vanilla": "initialize_vanilla_model", "synthesizer": "initialize_synthesizer_model"}


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

    @property
    def accuracy(self) -> float | None:
        return None if self.total in (None, 0) else self.correct / self.total


def resolve_parts(notebooks) -> types.ModuleType | types.SimpleNamespace:
    """Graded parts: a loaded module, a notebook's ``globals()``, or notebook paths/folders."""
    if isinstance(notebooks, (types.ModuleType, types.SimpleNamespace)):
        return notebooks
    if isinstance(notebooks, Mapping):
        return types.SimpleNamespace(**notebooks)
    if isinstance(notebooks, (str, Path)):
        notebooks = [notebooks]
    paths = [p for target in notebooks for p in notebook_paths(target)]
    return load_notebooks(paths)


def _require(parts: types.ModuleType, names) -> None:
    missing = [n for n in names if not hasattr(parts, n)]
    if missing:
        raise RunError(f"the notebooks define no {', '.join(missing)}; run the cells that define them (or name the right notebooks)")


def model_config(preset: Preset, vocab_size: int) -> GPTConfig:
    return GPTConfig(vocab_size, preset.block_size, **preset.model)


def apply_overrides(config: TrainerConfig, overrides: dict, n_examples: int, block_size: int) -> TrainerConfig:
    """The preset's changes to a TrainerConfig; final_tokens="auto" ends the cosine with the run."""
    overrides = dict(overrides)
    if overrides.get("final_tokens") == "auto":
        epochs = overrides.get("max_epochs", config.max_epochs)
        batch = overrides.get("batch_size", config.batch_size)
        steps = epochs * math.ceil(n_examples / batch)
        overrides["final_tokens"] = max(steps * batch * (block_size - 1), overrides.get("warmup_tokens", config.warmup_tokens) + 1)
        overrides.setdefault("lr_decay", True)
    return dataclasses.replace(config, **overrides)


def build_model(parts, spec: RunSpec, mconf: GPTConfig) -> nn.Module:
    """The variant's model from the notebooks' initialize_*_model (checked to be a torch module)."""
    init = VARIANT_INIT[spec.variant]
    _require(parts, [init])
    model = getattr(parts, init)(mconf)
    if not isinstance(model, nn.Module):
        raise RunError(f"{init} returned {type(model).__name__}, expected a torch module (a GPT)")
    return model


def _trainer_from(result, what: str) -> Trainer:
    if not (isinstance(result, tuple) and len(result) == 2 and isinstance(result[1], Trainer)):
        raise RunError(f"{what} must return (TrainerConfig, Trainer); got {type(result).__name__}")
    return result[1]


def run(name: str, notebooks, preset: str | Preset = "cpu", data_dir: str | Path = DEFAULT_DATA_DIR,
        out_dir: str | Path = DEFAULT_OUT_DIR, seed: int = 0, device: str = "auto",
        progress: bool = True, num_threads: int | None = None) -> RunResult:
    """Carry out one named run of run.sh; see RUNS for the names."""
    if name not in RUNS:
        raise RunError(f"unknown run {name!r}; choose one of: {', '.join(RUNS)}")
    spec = RUNS[name]
    preset = get_preset(preset) if isinstance(preset, str) else preset
    data_dir, out_dir = Path(data_dir), Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    parts = resolve_parts(notebooks)
    _require(parts, REQUIRED[spec.function])
    seed_everything(seed)
    set_threads(num_threads)
    start = time.perf_counter()

    # finetuning and evaluation use only the given part (the vocabulary), so they work before span corruption is written
    dataset_class = getattr(parts, "CharCorruptionDataset", CharCorruptionDatasetBase)
    pretrain_dataset = dataset_class(read_text(data_dir / WIKI), preset.block_size)
    mconf = model_config(preset, pretrain_dataset.vocab_size)
    model = build_model(parts, spec, mconf)
    result = RunResult(name, preset.name, 0.0, [])
    common = dict(seed=seed, device=device, num_threads=num_threads)
    if not progress:
        common["progress"] = False

    if spec.function == "evaluate":
        model = load_params(model, out_dir / spec.reads).to(pick_device(device))
        examples = read_birth_places(data_dir / spec.eval_corpus)
        predictions = predict_places(model, pretrain_dataset.vocab, [e.question for e in examples], preset.eval_batch_size)
        write_predictions(predictions, out_dir / spec.outputs)
        result.written.append(spec.outputs)
        if all(e.place is not None for e in examples):
            result.correct, result.total = accuracy(predictions, [e.place for e in examples])
    else:
        if spec.function == "pretrain":
            trainer = _trainer_from(parts.pretrain(pretrain_dataset, preset.block_size, model), "pretrain")
            overrides = preset.pretrain
        else:
            reads = str(out_dir / spec.reads) if spec.reads else None
            if reads and not Path(reads).is_file():
                raise RunError(f"{reads} not found: run the matching *_pretrain run first")
            got = parts.finetune(reads, str(data_dir / TRAIN), pretrain_dataset, preset.block_size, model)
            trainer = _trainer_from(got, "finetune")
            overrides = preset.finetune_with_pretrain if reads else preset.finetune_without_pretrain
        trainer.config = apply_overrides(trainer.config, {**common, **overrides}, len(trainer.train_dataset),
                                         preset.block_size)
        (out_dir / spec.writes).unlink(missing_ok=True)  # so a stale file cannot pass for this run's
        parts.train(model, str(out_dir / spec.writes), trainer)
        if not (out_dir / spec.writes).is_file():
            raise RunError(f"train() did not write {out_dir / spec.writes}")
        result.written.append(spec.writes)
        result.history = trainer.history

    result.seconds = time.perf_counter() - start
    log = dataclasses.asdict(result) | {"accuracy": result.accuracy}
    (out_dir / f"{name}.json").write_text(json.dumps(log), encoding="utf-8")
    return result
