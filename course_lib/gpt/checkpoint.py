"""Save and load model parameters so that any checkpoint loads on a CPU; save a whole training run's state and
resume it where it stopped (``TrainingCheckpoints``, a trainer callback)."""
from __future__ import annotations

import os
import random
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
from torch import nn


class CheckpointError(RuntimeError):
    """A params file is missing, unreadable, or does not fit the model."""


def atomic_save(obj, path: str | Path) -> Path:
    """``torch.save`` to a temporary file beside ``path``, then renamed over it: a crash mid-save never leaves a
    truncated file."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    torch.save(obj, tmp)
    tmp.replace(path)
    return path


def save_params(model: nn.Module, path: str | Path) -> Path:
    """Write the model's state_dict with every tensor moved to the CPU."""
    model = getattr(model, "module", model)  # unwrap DataParallel
    return atomic_save({k: v.detach().cpu() for k, v in model.state_dict().items()}, path)


def load_params(model: nn.Module, path: str | Path) -> nn.Module:
    """Load a params file into ``model`` (on whatever device the model is)."""
    path = Path(path)
    if not path.is_file():
        raise CheckpointError(f"params file not found: {path}")
    try:
        state = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as err:  # truncated, not a torch file, or unsafe pickle
        raise CheckpointError(f"could not read params file {path}: {err}") from err
    if not isinstance(state, dict):
        raise CheckpointError(f"{path} does not hold a state_dict (got {type(state).__name__})")
    try:
        model.load_state_dict(state)
    except RuntimeError as err:
        raise CheckpointError(
            f"params in {path} do not fit this model (was it trained with another config or attention?): {err}"
        ) from err
    return model


# wrappers that save their module's names with a prefix: DataParallel, torch.compile
WRAPPER_PREFIXES = ("module.", "_orig_mod.")


@dataclass(frozen=True)
class Misfit:
    """Why a state_dict does not fit a model, in numbers and the model's own names (safe to show anyone)."""

    kind: str  # "not_a_state_dict", "vocabulary", "missing" or "shape"
    name: str = ""  # the model's tensor concerned
    got: tuple[int, ...] = ()  # the shape found (for "vocabulary": (symbols,))
    want: tuple[int, ...] = ()  # the shape the model has


def strip_wrappers(state: dict) -> dict:
    """``state`` without the prefix a wrapper (DataParallel, torch.compile) put on every one of its names."""
    for prefix in WRAPPER_PREFIXES:
        if state and all(k.startswith(prefix) for k in state):
            state = {k[len(prefix):]: v for k, v in state.items()}
    return state


def fit_state_dict(model: nn.Module, state) -> tuple[dict | None, Misfit | None]:
    """``state`` as ``model``'s state_dict, judged by what the model holds, not by how it was saved.

    Wrapper prefixes are stripped, and entries the model does not hold (a causal mask a student
    registered as a persistent buffer, extra modules of their own) are left out: whatever they
    changed shows in what the loaded model answers. Every tensor the model holds must be there with
    its shape: (the fitted state, None), or (None, why not).
    """
    if not isinstance(state, dict) or not all(isinstance(k, str) and isinstance(v, torch.Tensor)
                                              for k, v in state.items()):
        return None, Misfit("not_a_state_dict")
    state = strip_wrappers(state)
    expected = model.state_dict()
    for name, tensor in expected.items():
        found = state.get(name)
        if found is None:
            return None, Misfit("missing", name, (), tuple(tensor.shape))
        if tuple(found.shape) != tuple(tensor.shape):
            if name == "tok_emb.weight" and found.dim() == 2 and found.size(1) == tensor.size(1):
                return None, Misfit("vocabulary", name, (found.size(0),), (tensor.size(0),))
            return None, Misfit("shape", name, tuple(found.shape), tuple(tensor.shape))
    return {name: state[name] for name in expected}, None


def _random_states() -> dict:
    """Every random generator a training step draws from (Python, NumPy, torch's CPU and CUDA ones), in types
    ``torch.load(weights_only=True)`` reads back."""
    version, state, gauss = random.getstate()
    kind, keys, pos, has_gauss, cached = np.random.get_state()
    return {"python": [version, list(state), gauss], "numpy": [kind, torch.from_numpy(keys.astype(np.int64)), pos,
                                                                 has_gauss, cached],
            "torch": torch.get_rng_state(),
            "cuda": torch.cuda.get_rng_state_all() if torch.cuda.is_available() else []}


def _set_random_states(states: dict) -> None:
    version, state, gauss = states["python"]
    random.setstate((version, tuple(state), gauss))
    kind, keys, pos, has_gauss, cached = states["numpy"]
    np.random.set_state((kind, keys.numpy().astype(np.uint32), pos, has_gauss, cached))
    torch.set_rng_state(states["torch"])
    if states["cuda"] and torch.cuda.is_available():
        torch.cuda.set_rng_state_all(states["cuda"])


def training_state(trainer) -> dict:
    """All a trainer needs to go on exactly where it stands at an epoch's end: params, optimizer, counters, loss
    history and random generators."""
    model = getattr(trainer.model, "module", trainer.model)
    return {"model": {k: v.detach().cpu() for k, v in model.state_dict().items()},
            "optimizer": trainer.optimizer.state_dict(),
            "trainer": {"step": trainer.step, "next_epoch": trainer.epoch + 1, "tokens": trainer.tokens,
                        "loss": trainer.loss, "lr": trainer.lr, "best_loss": trainer.best_loss,
                        "elapsed": trainer.elapsed, "history": trainer.history},
            "random": _random_states()}


def restore_training_state(trainer, state: dict) -> None:
    """Put ``training_state``'s result back into a trainer whose train() has made its optimizer."""
    getattr(trainer.model, "module", trainer.model).load_state_dict(state["model"])
    trainer.optimizer.load_state_dict(state["optimizer"])
    counters = state["trainer"]
    trainer.step, trainer.tokens = counters["step"], counters["tokens"]
    trainer.loss, trainer.lr, trainer.best_loss = counters["loss"], counters["lr"], counters["best_loss"]
    trainer.elapsed, trainer.history = counters["elapsed"], list(counters["history"])
    config = trainer.config
    done = config.max_steps is not None and trainer.step >= config.max_steps
    trainer.start_epoch = config.max_epochs if done else counters["next_epoch"]
    _set_random_states(state["random"])


class TrainingCheckpoints:
    """A trainer's checkpoints in one file: saved at an epoch's end once ``seconds`` have passed since the last,
    restored when training starts if it was saved by the same run (``fingerprint``: its code, data and settings).

    Each holds the whole training state (``training_state``), so a resumed run reaches the params of an
    uninterrupted one. ``say`` hears what happened, in one line."""

    def __init__(self, path: str | Path, fingerprint: str, seconds: float = 30.0,
                 say: Callable[[str], None] | None = None):
        self.path = Path(path)
        self.fingerprint = fingerprint
        self.seconds = seconds
        self.say = say or (lambda line: print(line, flush=True))
        self.on_save: Callable[[object], None] | None = None  # called with the trainer after each save
        self.restored = False
        self.last = 0.0

    def attach(self, trainer) -> None:
        trainer.add_callback("on_train_start", self.restore)
        trainer.add_callback("on_epoch_end", self.save_if_due)

    def read(self) -> dict | None:
        """The saved state when it belongs to this run; None (and the file removed) otherwise."""
        if not self.path.is_file():
            return None
        try:
            state = torch.load(self.path, map_location="cpu", weights_only=True)
        except Exception as err:  # cut short by a full disk, or not ours: start over
            self.say(f"the checkpoint {self.path.name} is unreadable ({type(err).__name__}): starting over")
            state = None
        else:
            if not isinstance(state, dict) or state.get("fingerprint") != self.fingerprint:
                self.say(f"the checkpoint {self.path.name} was saved by other code, data or settings: starting over")
                state = None
        if state is None:
            self.discard()
        return state

    def restore(self, trainer) -> None:
        """on_train_start: go on from the saved state (the first train() call of the run only)."""
        self.last = time.monotonic()
        if self.restored:
            return
        self.restored = True
        state = self.read()
        if state is not None:
            restore_training_state(trainer, state)
            saved = time.strftime("%H:%M:%S", time.localtime(state["saved"]))
            self.say(f"resuming at step {trainer.step:,} from {self.path.name} (saved at {saved})")

    def save_if_due(self, trainer) -> None:
        """on_epoch_end: save when ``seconds`` have passed since the last save (or the start)."""
        if time.monotonic() - self.last >= self.seconds:
            self.save(trainer)

    def save(self, trainer) -> None:
        atomic_save({"fingerprint": self.fingerprint, "saved": time.time(), **training_state(trainer)}, self.path)
        self.last = time.monotonic()
        if self.on_save is not None:
            self.on_save(trainer)

    def discard(self) -> None:
        """Remove the file: the run it saved is done (its params are written) or is not this one."""
        self.path.unlink(missing_ok=True)
