"""Probes: apply a student's parts to the grader's inputs and return what came out, raw.

Each probe takes the student's loaded parts and the inputs the grader chose
for this grading, and returns plain values and tensors. It decides nothing:
``autograder.judges`` verifies every output in the grader's own process.
"""
from __future__ import annotations

import dataclasses
import random
from pathlib import Path

import torch

from course_lib.datasets import CharCorruptionDatasetBase
from course_lib.model import GPT, GPTConfig
from course_lib.trainer import TrainerConfig

TRAINER_FIELDS = [f.name for f in dataclasses.fields(TrainerConfig)]
PLAIN = (bool, int, float, str, type(None))


def _fields(config) -> dict:
    """Every TrainerConfig field the returned object has, as plain values (absent ones as None)."""
    out = {}
    for name in TRAINER_FIELDS:
        value = getattr(config, name, None)
        out[name] = value if isinstance(value, PLAIN) else list(value) if isinstance(value, tuple) else repr(value)
    return out


def _pair(result) -> tuple:
    """(config, trainer) from a glue function's result; a clear error otherwise."""
    if not (isinstance(result, tuple) and len(result) == 2):
        raise TypeError(f"should return (TrainerConfig, Trainer), got {type(result).__name__}")
    return result


def _toy_world(inputs: dict) -> tuple[CharCorruptionDatasetBase, str, GPTConfig]:
    corpus_dataset = CharCorruptionDatasetBase(inputs["corpus"], inputs["block_size"])
    path = Path("/tmp") / "toy_train.tsv" if Path("/tmp").is_dir() else Path("toy_train.tsv")
    path.write_text(inputs["train_text"], encoding="utf-8")
    mconf = GPTConfig(corpus_dataset.vocab_size, inputs["block_size"], **inputs["model"])
    return corpus_dataset, str(path), mconf


def _dataset_view(dataset, indices: list[int]) -> dict:
    """Its length and the items at the grader's indices (None for an item that cannot be read: the judge says why)."""
    items = []
    for i in indices:
        try:
            items.append(list(dataset[i]))
        except Exception:  # e.g. a span-corruption dataset where a NameDataset belongs
            items.append(None)
    return {"length": len(dataset), "items": items}


def finetune_config(parts, inputs: dict) -> dict:
    """finetune without params: what it returns, the trainer's dataset, and the model init's logits."""
    corpus_dataset, train_path, mconf = _toy_world(inputs)
    model = parts.initialize_vanilla_model(mconf)
    model.load_state_dict(inputs["state"])
    model.eval()
    with torch.no_grad():
        logits = model(inputs["idx"])[0]
    config, trainer = _pair(parts.finetune(None, train_path, corpus_dataset, inputs["block_size"], model))
    return {"logits": logits, "config": _fields(config), "trainer_config": _fields(trainer.config),
            "dataset": _dataset_view(trainer.train_dataset, inputs["item_indices"])}


def finetune_pretrained(parts, inputs: dict) -> dict:
    """finetune with a params path, then one step of train(): the model's params and the file train() saved."""
    corpus_dataset, train_path, mconf = _toy_world(inputs)
    model = parts.initialize_vanilla_model(mconf)
    config, trainer = _pair(parts.finetune(inputs["params_file"], train_path, corpus_dataset, inputs["block_size"],
                                           model))
    out = {"config": _fields(config), "trainer_config": _fields(trainer.config),
           "state_after_finetune": {k: v.detach().clone() for k, v in model.state_dict().items()},
           "dataset": _dataset_view(trainer.train_dataset, inputs["item_indices"])}
    trainer.config.max_epochs, trainer.config.max_steps, trainer.config.num_workers = 1, 1, 0
    trainer.config.progress = False
    saved = Path("/tmp" if Path("/tmp").is_dir() else ".") / "trained.params"
    try:
        parts.train(model, str(saved), trainer)
    except Exception as err:  # judged after the config and dataset, which may say why it failed
        out["train_error"] = type(err).__name__
    out["saved"] = torch.load(saved, map_location="cpu", weights_only=True) if saved.is_file() else None
    return out


def pretrain_config(parts, inputs: dict) -> dict:
    """pretrain on a given dataset: what it returns and the documents its trainer trains on."""
    dataset = CharCorruptionDatasetBase(inputs["corpus"], inputs["block_size"])
    model = GPT(GPTConfig(dataset.vocab_size, inputs["block_size"], **inputs["model"]))
    config, trainer = _pair(parts.pretrain(dataset, inputs["block_size"], model))
    data = getattr(trainer.train_dataset, "data", None)
    return {"config": _fields(config), "trainer_config": _fields(trainer.config),
            "documents": list(data) if isinstance(data, list) else None}


def span_corruption(parts, inputs: dict) -> list:
    """For each (document, random seed) drawn by the grader: the (x, y) the student's dataset gives."""
    out = []
    for spec in inputs["plans"]:
        dataset = parts.CharCorruptionDataset(spec["corpus"], spec["block_size"])
        samples = []
        for idx, seed in spec["draws"]:
            random.seed(seed)
            torch.manual_seed(seed)
            x, y = dataset[idx]
            samples.append([x, y])
        out.append(samples)
    return out


def synthesizer_outputs(parts, inputs: dict) -> list:
    """The student's layer with the grader's weights on the grader's inputs, in eval mode."""
    outputs = []
    for case in inputs["cases"]:
        n_embd, n_head, block_size = case["dims"]
        layer = parts.SynthesizerAttention(GPTConfig(4, block_size, n_layer=1, n_head=n_head, n_embd=n_embd))
        layer.load_state_dict(case["state"])
        layer.eval()
        with torch.no_grad():
            outputs.append([layer(x) for x in case["inputs"]])
    return outputs


def synthesizer_model(parts, inputs: dict) -> dict:
    """The parameter names and shapes of the model initialize_synthesizer_model builds."""
    model = parts.initialize_synthesizer_model(GPTConfig(**inputs["config"]))
    return {"shapes": {k: list(v.shape) for k, v in model.state_dict().items()}}


def variables(parts, inputs: dict) -> dict:
    """Named values the notebook defines (numeric twins), and calls of named functions."""
    out = {name: getattr(parts, name) for name in inputs.get("names", [])}
    for name, calls in inputs.get("calls", {}).items():
        out[name] = [getattr(parts, name)(*args) for args in calls]
    return out


PROBES = {f.__name__: f for f in (finetune_config, finetune_pretrained, pretrain_config, span_corruption,
                                  synthesizer_outputs, synthesizer_model, variables)}
