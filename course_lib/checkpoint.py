"""Save and load model parameters so that any checkpoint loads on a CPU."""
from __future__ import annotations

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
