"""The glue checks (notebooks 02 and 04): the model init, the trainer configs, the datasets and the params.

Every check draws a toy world (``course_lib.checks.inputs.toy_world``): a corpus, a finetuning file,
a block size, a model shape and dropout rates, each a value the handout never shows, so an answer that
types in a number of the handout instead of reading it from its arguments fails on every draw. The
probes call the student's functions on it and send back what came out (configs as plain fields, the
model's shapes, dropout rates and outputs, params before and after a trainer's step); the judges
compare with what the handout asks of those arguments, naming what differs and never the value it
should have. What train() and a params file are held to is ``course_lib.checks.glue_train``'s.
"""
from __future__ import annotations

import dataclasses
import math
import random
import tempfile
from pathlib import Path

import torch
from torch import nn

from course_lib.checks.common import TOLERANCE, close, type_found
from course_lib.checks.glue_train import (
    DROPOUT_FIELDS,
    TOKEN_COUNTS,
    loaded_problems,
    state_of,
    still_config,
    train_probe,
    train_problems,
    trainer_fields,
)
from course_lib.checks.inputs import item_indices, random_state, token_ids, toy_model, toy_world
from course_lib.gpt.datasets import CharCorruptionDatasetBase, NameDataset
from course_lib.gpt.model import GPT, GPTConfig
from course_lib.gpt.vocab import PAD_CHAR

HANDOUT = dict(batch_size=256, learning_rate=6e-4, lr_decay=True, warmup_tokens=512 * 20, num_workers=4)
PRETRAIN_HANDOUT = dict(HANDOUT, max_epochs=650, batch_size=128, learning_rate=6e-3)
NO_PARAMS, WITH_PARAMS = "finetune (no params file)", "finetune (given a params file)"  # who the messages name
# errors of the student's calls a check reports by type (a timeout is none of these)
CRASHES = (ArithmeticError, AssertionError, AttributeError, LookupError, TypeError, ValueError, RuntimeError,
           OSError)


# --- what the probes send back -------------------------------------------------------------------

def _pair(result, what: str) -> tuple:
    """(config, trainer) from a glue function's result; a clear error otherwise."""
    if not (isinstance(result, tuple) and len(result) == 2):
        raise TypeError(f"{what} should return (TrainerConfig, Trainer), got {type(result).__name__}")
    return result


def _dataset_view(dataset, indices: list[int]) -> dict:
    """Its length and the items at the given indices (None for an item that cannot be read: the judge says why)."""
    items = []
    for i in indices:
        try:
            items.append(list(dataset[i]))
        except Exception:  # e.g. a span-corruption dataset where a NameDataset belongs
            items.append(None)
    return {"length": len(dataset), "items": items}


def _setup_view(config, trainer, indices: list[int] | None = None) -> dict:
    """What a glue function returned: its config's fields, its Trainer's, and (given indices) its dataset's items."""
    view = {"config": trainer_fields(config), "trainer_config": trainer_fields(trainer.config)}
    if indices is not None:
        view["dataset"] = _dataset_view(trainer.train_dataset, indices)
    return view


def dropout_rates(model: nn.Module) -> dict[str, float]:
    """Each dropout module's rate, by the module's name (so the order they were made in does not matter)."""
    return {name: m.p for name, m in model.named_modules() if isinstance(m, nn.Dropout)}


def model_view(model, state: dict | None = None, idx: torch.Tensor | None = None) -> dict:
    """What a model init returned: its type, parameter shapes and dropout rates and, when ``state`` loads into
    it, its logits on ``idx`` in eval mode (a model of other shapes cannot take the state: its shapes say why)."""
    if not isinstance(model, nn.Module):
        return {"module": False, "type": type(model).__name__}
    view = {"module": True, "gpt": isinstance(model, GPT), "type": type(model).__name__,
            "shapes": {k: list(v.shape) for k, v in model.state_dict().items()}, "dropouts": dropout_rates(model)}
    if state is not None:
        try:  # buffers of the student's own (not in the state) keep their values
            model.load_state_dict(state, strict=False)
        except (RuntimeError, KeyError, TypeError):
            return view
        model.eval()
        with torch.no_grad():
            view["logits"] = model(idx)[0]  # (2, T, vocab)
    return view


def _toy_world(inputs: dict, folder: Path) -> tuple[CharCorruptionDatasetBase, str, GPTConfig]:
    corpus_dataset = CharCorruptionDatasetBase(inputs["corpus"], inputs["block_size"])
    path = folder / "toy_train.tsv"
    path.write_text(inputs["train_text"], encoding="utf-8")
    mconf = GPTConfig(corpus_dataset.vocab_size, inputs["block_size"], **inputs["model"])
    return corpus_dataset, str(path), mconf


def _one_step(trainer, model: nn.Module, seed: int) -> dict:
    """The trainer run for one step (its own config, no loader workers, no checkpoint file): the given model's
    params after it, or the error's type."""
    config = trainer.config
    config.max_epochs, config.max_steps, config.num_workers, config.progress = 1, 1, 0, False
    config.ckpt_path = None
    torch.manual_seed(seed)
    try:
        trainer.train()
    except CRASHES as err:
        return {"train_error": type(err).__name__}
    return {"state_after_step": state_of(model)}


# --- the model init (02, 05) ---------------------------------------------------------------------

def _and(names: list[str]) -> str:
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def _config_of(shapes: dict) -> dict:
    """The GPTConfig sizes a vanilla or synthesizer GPT's parameter shapes show."""
    found = {}
    token, position = shapes.get("tok_emb.weight"), shapes.get("pos_emb")
    if isinstance(token, list) and len(token) == 2:
        found["vocab_size"], found["n_embd"] = token
    if isinstance(position, list) and len(position) == 3:
        found["block_size"] = position[1]
    found["n_layer"] = len({k.split(".")[1] for k in shapes if k.startswith("blocks.")})
    return found


def dropout_problems(got, config: GPTConfig, want: nn.Module, who: str) -> list[str]:
    """Every dropout module ``want`` has (by name), at the rate its config field gives it."""
    if not isinstance(got, dict):
        return [f"{who} should return the course's GPT, built from the config it is given"]
    rates = {field: getattr(config, field) for field in DROPOUT_FIELDS}
    wrong = set()
    for name, p in dropout_rates(want).items():
        rate = got.get(name)
        if not (isinstance(rate, (int, float)) and not isinstance(rate, bool) and math.isclose(rate, p)):
            wrong |= {field for field, value in rates.items() if value == p}
    if wrong:
        fields = _and([f for f in DROPOUT_FIELDS if f in wrong])
        return [f"{who}: {fields} {'differs' if len(wrong) == 1 else 'differ'} from the config it is given (build the "
                "model from that config)"]
    return []


def model_problems(view, config: GPTConfig, want: nn.Module, who: str, what: str = "the course's GPT") -> list[str]:
    """The model a student's init returned against ``want`` (the course's model of ``config``): a module, the
    shapes the config gives, the config's dropout rates. Each message one line, naming what differs."""
    if not isinstance(view, dict) or view.get("module") is not True:
        found = view.get("type") if isinstance(view, dict) and isinstance(view.get("type"), str) else type_found(view)
        return [f"{who} returned a {found}: it should return {what}, built from the config it is given"]
    shapes = {k: list(v.shape) for k, v in want.state_dict().items()}
    got = view.get("shapes")
    if not isinstance(got, dict) or any(got.get(k) != v for k, v in shapes.items()):
        sizes = _config_of(got) if isinstance(got, dict) else {}
        fields = [f.name for f in dataclasses.fields(config)
                  if f.name in sizes and getattr(config, f.name) != sizes[f.name]]
        if fields:
            return [f"{who}: the model has another {_and(fields)} than the config it is given"]
        if isinstance(got, dict) and not set(shapes) <= set(got):
            return [f"{who}: another attention or other modules than {what} (the model's parameters differ)"]
        return [f"{who}: the model's parameter shapes are not those the config it is given makes"]
    return dropout_problems(view.get("dropouts"), config, want, who)


# --- configs and datasets ------------------------------------------------------------------------

def _differing(fields, expected: dict) -> list[str] | None:
    """The TrainerConfig fields that differ from ``expected`` (named, never their values); None: no config at all."""
    if not isinstance(fields, dict) or all(v is None for v in fields.values()):
        return None
    wrong = []
    for name, want in expected.items():
        got = fields.get(name)
        if isinstance(want, bool) or isinstance(got, bool):
            ok = got is want
        elif isinstance(want, float):
            ok = isinstance(got, (int, float)) and math.isclose(got, want, rel_tol=1e-9)
        elif name in TOKEN_COUNTS:
            # the trainer only compares and divides by them: 512 * 20.0 trains the same
            ok = isinstance(got, (int, float)) and got == want
        else:
            ok = isinstance(got, int) and got == want
        if not ok:
            wrong.append(name)
    return wrong


def both_configs(output, expected: dict, what: str) -> list[str]:
    """The config a glue function returned, then its Trainer's (the runs read the trainer's own: the same)."""
    if not isinstance(output, dict):
        return [f"{what}'s results did not come back"]
    returned = _differing(output.get("config"), expected)
    if returned is None:
        return [f"{what} should return a TrainerConfig (and the Trainer built with it)"]
    if returned:
        return [f"{what}: {_and(returned)} {'is' if len(returned) == 1 else 'are'} not the handout's"]
    trainers = _differing(output.get("trainer_config"), expected)
    if trainers is None or trainers:
        named = f"{_and(trainers)} {'differs' if len(trainers) == 1 else 'differ'}" if trainers else "config differs"
        return [f"{what}: give its Trainer the TrainerConfig it returns (the Trainer's {named})"]
    return []


def finetune_expected(inputs: dict, max_epochs: int) -> dict:
    documents = len(inputs["corpus"].split("\n"))
    return dict(HANDOUT, max_epochs=max_epochs, final_tokens=200 * documents * inputs["block_size"])


def dataset_problems(inputs: dict, view, what: str) -> list[str]:
    """The trainer's dataset must be a NameDataset of the given file: same length, same items."""
    pretrain = CharCorruptionDatasetBase(inputs["corpus"], inputs["block_size"])
    want = NameDataset(pretrain, inputs["train_text"])
    if not isinstance(view, dict) or view.get("length") != len(want):
        return [f"{what}: train on a NameDataset of the finetuning file (at finetune_corpus_path)"]
    items = view.get("items")
    if not isinstance(items, list) or len(items) != len(inputs["item_indices"]):
        return [f"{what}: the training examples did not come back complete"]
    for i, item in zip(inputs["item_indices"], items):
        x, y = want[i]
        if not (isinstance(item, list) and len(item) == 2 and all(isinstance(t, torch.Tensor) for t in item)
                and torch.equal(item[0], x) and torch.equal(item[1], y)):
            return [f"{what}: train on a NameDataset of the finetuning file (at finetune_corpus_path)"]
    return []


def setup_problems(inputs: dict, output: dict, what: str, max_epochs: int) -> list[str]:
    """The handout's finetuning config (in what finetune returns and in its Trainer) and its dataset."""
    problems = both_configs(output, finetune_expected(inputs, max_epochs), what)
    return problems or dataset_problems(inputs, output.get("dataset"), what)


# --- finetuning (02) -----------------------------------------------------------------------------

def finetune_config_inputs(rng: random.Random) -> dict:
    world = toy_world(rng)
    model = toy_model(world)
    return {**world, "state": random_state(model, rng, scale=0.1), "item_indices": item_indices(rng, world),
            "idx": token_ids(rng, model.head.out_features, world["block_size"]), "seed": rng.randrange(2 ** 31)}


def finetune_config_probe(parts, inputs: dict) -> dict:
    """The model init on the config (shapes, dropout rates, logits with the given state); finetune without params
    (its configs and the trainer's dataset); then finetune given a params file, on the course's GPT without dropout
    (its configs and the params it left in that model), and train() on the trainer it returned (glue_train)."""
    with tempfile.TemporaryDirectory(prefix="glue-") as tmp:
        corpus_dataset, train_path, mconf = _toy_world(inputs, Path(tmp))
        model = parts.initialize_vanilla_model(mconf)
        out = {"model": model_view(model, inputs["state"], inputs["idx"])}
        config, trainer = _pair(parts.finetune(None, train_path, corpus_dataset, inputs["block_size"], model),
                                "finetune")
        out.update(_setup_view(config, trainer, inputs["item_indices"]))
        params = Path(tmp) / "pretrained.params"
        torch.save(inputs["state"], params)
        still = GPT(still_config(inputs, corpus_dataset.vocab_size))  # the params fit it
        config, trainer = _pair(parts.finetune(str(params), train_path, corpus_dataset, inputs["block_size"], still),
                                "finetune")
        out["with_params"] = {**_setup_view(config, trainer), "state_after_finetune": state_of(still)}
        work = Path(tmp) / "train"
        work.mkdir()
        out["with_params"].update(train_probe(parts.train, still, trainer, work, inputs["seed"]))
        return out


def finetune_config_problems(inputs: dict, output) -> list[str]:
    """The model init builds the course's GPT from its config; finetune's configs without params (75 epochs)
    and with them (10 epochs) are the handout's, and it trains on a NameDataset of the file; given a params file,
    finetune loads it into the model it is given, and train() trains that model once, then saves it where told."""
    if not isinstance(output, dict):
        return ["finetune's results did not come back"]
    model = toy_model(inputs)
    view = output.get("model")
    problems = model_problems(view, model.config, model, "initialize_vanilla_model")
    if not problems:
        model.load_state_dict(inputs["state"])
        model.eval()
        with torch.no_grad():
            want = model(inputs["idx"])[0]
        if not close(view.get("logits"), want, **TOLERANCE):
            problems = ["initialize_vanilla_model: with the same params its outputs are not the course's GPT's "
                        "(vanilla attention, built from the config it is given)"]
    with_params = output.get("with_params")
    problems = (problems or setup_problems(inputs, output, NO_PARAMS, 75)
                or both_configs(with_params, finetune_expected(inputs, 10), WITH_PARAMS))
    if problems:
        return problems
    return (loaded_problems(with_params.get("state_after_finetune"), inputs["state"])
            or train_problems(inputs, with_params, inputs["state"]))


def finetune_pretrained_probe(parts, inputs: dict) -> dict:
    """finetune with a params path, then one step of train(): the params before and after, and the file saved."""
    with tempfile.TemporaryDirectory(prefix="glue-") as tmp:
        corpus_dataset, train_path, mconf = _toy_world(inputs, Path(tmp))
        model = parts.initialize_vanilla_model(mconf)
        config, trainer = _pair(parts.finetune(inputs["params_file"], train_path, corpus_dataset,
                                               inputs["block_size"], model), "finetune")
        out = {**_setup_view(config, trainer, inputs["item_indices"]), "state_after_finetune": state_of(model)}
        work = Path(tmp) / "train"
        work.mkdir()
        out.update(train_probe(parts.train, model, trainer, work, inputs.get("seed", 0)))
        return out


# --- pretraining (04) ----------------------------------------------------------------------------

class PlainCorpus(CharCorruptionDatasetBase):
    """The corpus as plain next-character examples: something a pretraining Trainer can take a step on without
    the student's span corruption (whose own checks are notebook 03's)."""

    def __getitem__(self, idx: int) -> tuple[torch.Tensor, torch.Tensor]:
        text = self.data[idx][: self.block_size]
        ids = self.vocab.encode(text + PAD_CHAR * (self.block_size - len(text)))  # (block_size,)
        return ids[:-1], ids[1:]


def pretrain_config_inputs(rng: random.Random) -> dict:
    return {**toy_world(rng), "seed": rng.randrange(2 ** 31)}


def pretrain_config_probe(parts, inputs: dict) -> dict:
    """pretrain on a given dataset: what it returns, the documents its trainer trains on, and whether one step
    of that trainer trains the model given."""
    dataset = PlainCorpus(inputs["corpus"], inputs["block_size"])
    model = GPT(GPTConfig(dataset.vocab_size, inputs["block_size"], **inputs["model"]))
    before = state_of(model)
    config, trainer = _pair(parts.pretrain(dataset, inputs["block_size"], model), "pretrain")
    data = getattr(trainer.train_dataset, "data", None)
    out = {**_setup_view(config, trainer), "documents": list(data) if isinstance(data, list) else None}
    step = _one_step(trainer, model, inputs.get("seed", 0))
    after = step.pop("state_after_step", None)
    out.update(step)
    if after is not None:
        out["trained"] = any(not torch.equal(after[k], v) for k, v in before.items())
    return out


def pretrain_config_problems(inputs: dict, output) -> list[str]:
    """The handout's pretraining config, in what pretrain returns and in its Trainer, on the dataset given; one
    step of that Trainer trains the model given."""
    documents = inputs["corpus"].split("\n")
    expected = dict(PRETRAIN_HANDOUT, final_tokens=200 * len(documents) * inputs["block_size"])
    problems = both_configs(output, expected, "pretrain")
    if problems:
        return problems
    if output.get("documents") != documents:
        return ["pretrain should train on the pretraining dataset it is given"]
    error = output.get("train_error")
    if isinstance(error, str) and error.isidentifier():
        return [f"pretrain: one step of the Trainer it returns raised {error}"]
    if output.get("trained") is not True:
        return ["pretrain: its Trainer should train the model it is given, not a copy (one step of it left the "
                "model's params unchanged)"]
    return []
