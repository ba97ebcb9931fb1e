"""Save and load model parameters so that any checkpoint loads on a CPU."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import torch
from torch import nn


class CheckpointError(RuntimeError):
    """A params file is missing, unreadable, or does not fit the model."""


def save_params(model: nn.Module, path: str | Path) -> Path:
    """Write the model's state_dict with every tensor moved to the CPU."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    model = getattr(model, "module", model)  # unwrap DataParallel
    state = {k: v.detach().cpu() for k, v in model.state_dict().items()}
    tmp = path.with_name(path.name + ".tmp")
    torch.save(state, tmp)
    tmp.replace(path)  # atomic: a crash mid-save never leaves a truncated file
    return path


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
