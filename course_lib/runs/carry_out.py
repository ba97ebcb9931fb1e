"""Carrying out one named run of run.sh: the graded parts from the notebooks the caller names, a preset, the
original file names written into ``out_dir``.

A run is kept once it completed: run again with the same code, data, preset and seed, it reuses its files
instead of training (its log, ``course_lib.runs.record``, says so). A training run saves checkpoints while it
trains (``course_lib.gpt.checkpoint.TrainingCheckpoints``, under ``out_dir/checkpoints/``) and, run again,
resumes from the last one. Its threads follow the process's share of the CPUs
(``course_lib.gpt.cpu_share``), and its progress goes to ``out_dir/<run>.log`` as it trains.
"""
from __future__ import annotations

import dataclasses
import math
import os
import time
from pathlib import Path

import torch
from torch import nn

from course_lib import layout
from course_lib.contract import VARIANT_INIT, ContractError, StudentParts, namespace_of
from course_lib.data_files import read_birth_places, read_text
from course_lib.gpt.checkpoint import TrainingCheckpoints, load_params
from course_lib.gpt.cpu_share import FollowShare, ThreadChoice, choose_threads
from course_lib.gpt.device import pick_device, seed_everything
from course_lib.gpt.evaluation import accuracy, predict_places, write_predictions
from course_lib.gpt.model import GPTConfig
from course_lib.gpt.progress import ProgressLog, interactive
from course_lib.gpt.trainer import TrainerConfig
from course_lib.loader.code_prints import code_print
from course_lib.presets import Preset, get_preset
from course_lib.run_specs import RUNS, RunSpec  # torch-free, for the grader's readers of run files
from course_lib.runs.plan import plan_lines, plan_of
from course_lib.runs.record import RunResult, identity, kept, now, prints, read_log, settings_print, write_log

# file names and default folders are defined once, in course_lib.layout
WIKI, TRAIN, DEV, TEST_INPUTS = layout.WIKI, layout.TRAIN, layout.DEV, layout.TEST_INPUTS
DEFAULT_DATA_DIR, DEFAULT_OUT_DIR = layout.DEFAULT_DATA_DIR, layout.DEFAULT_OUT_DIR
CHECKPOINTS = "checkpoints"  # the folder of out_dir holding the checkpoints of runs not finished yet
# seconds between two checkpoints of a training run (at an epoch's end): COURSE_CHECKPOINT_SECONDS
CHECKPOINT_SECONDS = float(os.environ.get("COURSE_CHECKPOINT_SECONDS", "30"))

# the parts of the student contract (course_lib.contract) each kind of run calls
REQUIRED = {
    "pretrain": ("CharCorruptionDataset", "pretrain", "train"),
    "finetune": ("finetune", "train"),
    "evaluate": (),
}
# TrainerConfig fields that do not change what a run trains (where and how it shows progress)
UNSCORED_FIELDS = ("num_threads", "progress", "device", "ckpt_path")


class RunError(RuntimeError):
    """A run cannot start: unknown name, missing part in the notebooks, or missing input."""


def resolve_parts(notebooks):
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


def code_prints(parts, name: str) -> dict[str, str]:
    """graded part -> the print of its code (``course_lib.loader.code_prints``), for each part run ``name`` calls
    that the notebooks define."""
    spec = RUNS[name]
    namespace = StudentParts(parts).namespace
    found = {}
    for part in (*REQUIRED[spec.function], VARIANT_INIT[spec.variant]):
        value = getattr(namespace, part, None)
        if value is None:
            continue
        try:
            found[part] = code_print(value)
        except Exception:  # noqa: BLE001 (an object of the student's that cannot be printed is no print)
            continue
    return found


def data_read(spec: RunSpec) -> tuple[str, ...]:
    """The data files a run reads: the corpus (its vocabulary), and the questions it trains on or answers."""
    return (WIKI,) + {"pretrain": (), "finetune": (TRAIN,), "evaluate": (spec.eval_corpus,)}[spec.function]


def _saved(out_dir: Path, name: str) -> RunResult | None:
    try:
        return read_log(out_dir, name)
    except ValueError:
        return None  # unreadable: the run is done again, and writes a new one


def run(name: str, notebooks, preset: str | Preset = layout.DEFAULT_PRESET, data_dir: str | Path = DEFAULT_DATA_DIR,
        out_dir: str | Path = DEFAULT_OUT_DIR, seed: int = 0, device: str = "auto",
        progress: bool = True, num_threads: int | None = None, fresh: bool = False) -> RunResult:
    """Carry out one named run of run.sh; see RUNS for the names. ``seed`` is the training's random seed;
    ``fresh`` trains again even when the run is done or has a checkpoint."""
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
    if spec.reads and not (out_dir / spec.reads).is_file():
        before = next(n for n, s in RUNS.items() if s.writes == spec.reads)
        raise RunError(f"{out_dir / spec.reads} not found: run {before} first")
    threads = choose_threads(num_threads)
    seed_everything(seed)
    torch.set_num_threads(threads.threads)
    start = time.perf_counter()
    # evaluate and finetune need only its vocabulary, so they work before span corruption is written
    pretrain_dataset = parts.dataset_class()(read_text(data_dir / WIKI), preset.block_size)
    mconf = model_config(preset, pretrain_dataset.vocab_size)
    model = build_model(parts, spec, mconf)
    result = RunResult(name, preset.name, 0.0, [], seed=seed, completed=False, threads=threads.describe(),
                       data=prints(data_dir, data_read(spec)), code=code_prints(parts, name),
                       reads=prints(out_dir, [spec.reads] if spec.reads else []))
    saved = None if fresh else _saved(out_dir, name)
    try:
        if spec.function == "evaluate":
            result.settings = settings_print(model=dataclasses.asdict(mconf), batch=preset.eval_batch_size)
            if kept(saved, result, out_dir):
                return _kept(saved, out_dir)
            _evaluate(spec, model, pretrain_dataset, preset, data_dir, out_dir, device, result)
        else:
            settings = dict(seed=seed, device=device, num_threads=threads.threads,
                            **({} if progress else {"progress": False}))
            trainer = _trainer(spec, parts, model, pretrain_dataset, preset, data_dir, out_dir, settings, result)
            result.settings = settings_print(model=dataclasses.asdict(mconf), examples=len(trainer.train_dataset),
                                             trainer={k: v for k, v in dataclasses.asdict(trainer.config).items()
                                                      if k not in UNSCORED_FIELDS})
            if kept(saved, result, out_dir):
                return _kept(saved, out_dir)
            _train(spec, parts, model, trainer, out_dir, threads, fresh, progress, result)
    except ContractError as err:
        raise RunError(str(err)) from err
    result.seconds = time.perf_counter() - start
    result.completed, result.finished = True, now()
    result.outputs = prints(out_dir, result.written)
    write_log(result, out_dir)
    return result


def _kept(saved: RunResult, out_dir: Path) -> RunResult:
    when = (saved.finished or "")[:16].replace("T", " ")
    print(f"{saved.name}: done already ({when} UTC, with this code, data, preset and seed): kept "
          f"{', '.join(saved.written)}; delete {out_dir.name}/{saved.name}.json to run it again", flush=True)
    return dataclasses.replace(saved, kept=True)


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


def _trainer(spec: RunSpec, parts: StudentParts, model: nn.Module, dataset, preset: Preset, data_dir: Path,
             out_dir: Path, settings: dict, result: RunResult):
    """The student's pretrain or finetune builds the Trainer; the preset adjusts it; prints the plan."""
    if spec.function == "pretrain":
        trainer = parts.pretrain(dataset, preset.block_size, model)
        overrides = preset.pretrain
    else:
        reads = str(out_dir / spec.reads) if spec.reads else None
        trainer = parts.finetune(reads, str(data_dir / TRAIN), dataset, preset.block_size, model)
        overrides = preset.finetune_with_pretrain if reads else preset.finetune_without_pretrain
    returned = trainer.config
    trainer.config = apply_overrides(returned, {**settings, **overrides}, len(trainer.train_dataset), preset.block_size)
    trainer.planned = plan_of(result.name, returned, trainer.config, len(trainer.train_dataset), preset)
    result.steps = trainer.planned.steps
    return trainer


def _train(spec: RunSpec, parts: StudentParts, model: nn.Module, trainer, out_dir: Path, threads: ThreadChoice,
           fresh: bool, progress: bool, result: RunResult) -> None:
    """The student's train runs the trainer, with checkpoints, a progress log and threads that follow the share."""
    name = result.name
    device = pick_device(trainer.config.device).type
    print(f"{name}: training on {threads.describe() if device == 'cpu' else device}", flush=True)
    for line in plan_lines(trainer.planned, device):
        print(line, flush=True)
    log = ProgressLog(out_dir / f"{name}.log", name, echo=progress and not interactive())
    checkpoints = TrainingCheckpoints(out_dir / CHECKPOINTS / f"{name}.pt", identity(result), CHECKPOINT_SECONDS,
                                      say=lambda line: log.note(line, show=True))
    if fresh:
        checkpoints.discard()
    checkpoints.attach(trainer)
    log.attach(trainer)
    if threads.follows and device == "cpu":
        trainer.add_callback("on_batch_end", FollowShare(threads.share, say=log.note))
    print(f"  progress goes to {out_dir.name}/{name}.log, a checkpoint every {CHECKPOINT_SECONDS:g} s to "
          f"{out_dir.name}/{CHECKPOINTS}/: run it again to resume", flush=True)

    def stopped(_trainer=None) -> None:  # the log says how far it got, for the run cells
        result.history = trainer.history
        write_log(result, out_dir)

    checkpoints.on_save = stopped
    writes = out_dir / spec.writes
    writes.unlink(missing_ok=True)  # so a stale file cannot pass for this run's
    stopped()
    try:
        parts.train(model, str(writes), trainer)
    except BaseException:
        stopped()
        raise
    if not writes.is_file():
        raise RunError(f"train() did not write {writes}")
    checkpoints.discard()
    result.written.append(spec.writes)
    result.history = trainer.history

