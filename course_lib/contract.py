"""The student contract: what the notebooks must define, and one adapter that checks and calls it.

The runs (``course_lib.runs``), the notebooks' own training cells and the grader's probe
job all ask a student's notebooks for the same parts; this module is where those parts
are named, where they are written, and what each must be or return.
"""
from __future__ import annotations

import types
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from torch import nn

from course_lib.gpt.trainer import Trainer
from course_lib.loader.load import load_notebooks, notebook_paths


@dataclass(frozen=True)
class Part:
    """One name a student's notebooks must define."""

    name: str  # the name the notebook defines
    notebook: str  # the release notebook where the student writes it (without .ipynb)
    kind: str  # "function", "class" or "value" (a numeric twin: an array or a number)


PARTS: dict[str, Part] = {p.name: p for p in (
    Part("initialize_vanilla_model", "02_finetune_without_pretraining", "function"),
    Part("finetune", "02_finetune_without_pretraining", "function"),
    Part("train", "02_finetune_without_pretraining", "function"),
    Part("CharCorruptionDataset", "03_span_corruption", "class"),
    Part("pretrain", "04_pretrain_then_finetune", "function"),
    Part("SynthesizerAttention", "05_synthesizer", "class"),
    Part("initialize_synthesizer_model", "05_synthesizer", "function"),
    *(Part(name, "07_attention_exploration", "value")
      for name in ("q_copy", "M", "q_avg", "q_single", "q_1", "q_2", "c2_plain", "K", "Q", "V")),
    Part("P", "08_position_embeddings", "value"),
    Part("permuted_output", "08_position_embeddings", "function"),
    Part("position_embeddings", "08_position_embeddings", "function"),
)}
VARIANT_INIT = {"vanilla": "initialize_vanilla_model", "synthesizer": "initialize_synthesizer_model"}


class ContractError(RuntimeError):
    """The notebooks lack a part, or a part is not what the course expects."""


def namespace_of(notebooks) -> types.ModuleType | types.SimpleNamespace:
    """The parts' namespace: a loaded module, a notebook's ``globals()``, or notebook paths/folders to load."""
    if isinstance(notebooks, StudentParts):
        return notebooks.namespace
    if isinstance(notebooks, (types.ModuleType, types.SimpleNamespace)):
        return notebooks
    if isinstance(notebooks, Mapping):
        return types.SimpleNamespace(**notebooks)
    if isinstance(notebooks, (str, Path)):
        notebooks = [notebooks]
    return load_notebooks([p for target in notebooks for p in notebook_paths(target)])


class StudentParts:
    """A student's parts, checked before use: every call says which part is missing or of the wrong kind."""

    def __init__(self, notebooks):
        self.namespace = namespace_of(notebooks)

    def problems(self, names) -> list[str]:
        """What is missing or of the wrong kind among ``names`` (empty: all usable)."""
        found = []
        for name in names:
            part, value = PARTS.get(name), getattr(self.namespace, name, None)
            where = f" (write it in {part.notebook} and run its cell)" if part else ""
            if value is None:
                found.append(f"the notebooks define no {name}{where}")
            elif part and part.kind == "class" and not isinstance(value, type):
                found.append(f"{name} should be a class, not {type(value).__name__}")
            elif part and part.kind == "function" and not callable(value):
                found.append(f"{name} should be a function, not {type(value).__name__}")
        return found

    def require(self, names) -> None:
        problems = self.problems(names)
        if problems:
            raise ContractError("; ".join(problems))

    def get(self, name: str):
        self.require([name])
        return getattr(self.namespace, name)

    def dataset_class(self) -> type:
        """The student's CharCorruptionDataset once written; the base class (vocabulary only) before that."""
        from course_lib.gpt.datasets import CharCorruptionDatasetBase

        if getattr(self.namespace, "CharCorruptionDataset", None) is None:
            return CharCorruptionDatasetBase
        return self.get("CharCorruptionDataset")

    def model(self, variant: str, config) -> nn.Module:
        """The variant's model from ``initialize_<variant>_model(config)``, checked to be a torch module."""
        init = VARIANT_INIT[variant]
        model = self.get(init)(config)
        if not isinstance(model, nn.Module):
            raise ContractError(f"{init} returned {type(model).__name__}, expected a torch module (a GPT)")
        return model

    def pretrain(self, dataset, block_size: int, model: nn.Module) -> Trainer:
        return _trainer_from(self.get("pretrain")(dataset, block_size, model), "pretrain")

    def finetune(self, reading_params_path: str | None, finetune_corpus_path: str, pretrain_dataset,
                 block_size: int, model: nn.Module) -> Trainer:
        got = self.get("finetune")(reading_params_path, finetune_corpus_path, pretrain_dataset, block_size, model)
        return _trainer_from(got, "finetune")

    def train(self, model: nn.Module, writing_params_path: str, trainer: Trainer) -> None:
        self.get("train")(model, writing_params_path, trainer)


def _trainer_from(result, what: str) -> Trainer:
    if not (isinstance(result, tuple) and len(result) == 2 and isinstance(result[1], Trainer)):
        raise ContractError(f"{what} must return (TrainerConfig, Trainer); got {type(result).__name__}")
    return result[1]
