"""The glue checks (notebooks 02 and 04): the model init, the trainer configs, the datasets and the params.

Every check draws a toy world (``course_lib.checks.inputs.toy_world``): a corpus, a finetuning file,
a block size, a model shape and dropout rates, each a value the handout never shows, so an answer that
types in a number of the handout instead of reading it from its arguments fails on every draw. The
probes call the student's functions on it and send back what came out (configs as plain fields, the
model's shapes, dropout rates and outputs, params before and after a trainer's step); the judges
compare with what the handout asks of those arguments, naming what differs and never the value it
should have.
"""
from __future__ import annotations

import dataclasses
import math
import random
import tempfile
from pathlib import Path

import torch
from torch import nn

from course_lib.checks.common import PLAIN, TOLERANCE, close, type_found
from course_lib.checks.inputs import item_indices, random_state, token_ids, toy_model, toy_world
from course_lib.gpt.datasets import CharCorruptionDatasetBase, NameDataset
from course_lib.gpt.model import GPT, GPTConfig
from course_lib.gpt.trainer import Trainer, TrainerConfig
from course_lib.gpt.vocab import PAD_CHAR

TRAINER_FIELDS = [f.name for f in dataclasses.fields(TrainerConfig)]
HANDOUT = dict(batch_size=256, learning_rate=6e-4, lr_decay=True, warmup_tokens=512 * 20, num_workers=4)
PRETRAIN_HANDOUT = dict(HANDOUT, max_epochs=650, batch_size=128, learning_rate=6e-3)
TOKEN_COUNTS = frozenset({"warmup_tokens", "final_tokens"})  # ints a whole float may stand for
DROPOUT_FIELDS = ("embd_pdrop", "resid_pdrop", "attn_pdrop")
# fields that shape a training step's arithmetic: the judge's own step takes the student's values
STEP_FIELDS = ("batch_size", "learning_rate", "lr_decay", "warmup_tokens", "final_tokens", "betas", "grad_norm_clip",
               "weight_decay", "decay_matrices_only", "shuffle", "trim_padding", "length_buckets", "autocast_bf16",
               "fused_adamw")
# errors of the student's calls a check reports by type (a timeout is none of these)
CRASHES = (ArithmeticError, AssertionError, AttributeError, LookupError, TypeError, ValueError, RuntimeError,
           OSError)


# --- what the probes send back -------------------------------------------------------------------

def _fields(config) -> dict:
    """Every TrainerConfig field the object has, as plain values (absent ones as None)."""
    out = {}
    for name in TRAINER_FIELDS:
        value = getattr(config, name, None)
        out[name] = value if isinstance(value, PLAIN) else list(value) if isinstance(value, tuple) else repr(value)
    return out


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


def _state(model: nn.Module) -> dict[str, torch.Tensor]:
    return {k: v.detach().cpu().clone() for k, v in model.state_dict().items()}


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
    return {"state_after_step": _state(model)}


# --- the model init (02, 05) ---------------------------------------------------------------------

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
        return [f"{who} should return the course's GPT built from the config it is given"]
    rates = {field: getattr(config, field) for field in DROPOUT_FIELDS}
    wrong = set()
    for name, p in dropout_rates(want).items():
        rate = got.get(name)
        if not (isinstance(rate, (int, float)) and not isinstance(rate, bool) and math.isclose(rate, p)):
            wrong |= {field for field, value in rates.items() if value == p}
    if wrong:
        fields = ", ".join(f for f in DROPOUT_FIELDS if f in wrong)
        return [f"{who} should build the model from the config it is given: its dropout rates are not that "
                f"config's ({fields})"]
    return []


def model_problems(view, config: GPTConfig, want: nn.Module, who: str, what: str = "the course's GPT") -> list[str]:
    """The model a student's init returned against ``want`` (the course's model of ``config``): a module, the
    shapes the config gives, the config's dropout rates. Each message one line, naming what differs."""
    if not isinstance(view, dict) or view.get("module") is not True:
        found = view.get("type") if isinstance(view, dict) and isinstance(view.get("type"), str) else type_found(view)
        return [f"{who} should return {what} built from the config it is given; it returned a {found}"]
    shapes = {k: list(v.shape) for k, v in want.state_dict().items()}
    got = view.get("shapes")
    if not isinstance(got, dict) or any(got.get(k) != v for k, v in shapes.items()):
        sizes = _config_of(got) if isinstance(got, dict) else {}
        fields = [f.name for f in dataclasses.fields(config)
                  if f.name in sizes and getattr(config, f.name) != sizes[f.name]]
        if fields:
            named = fields[0] if len(fields) == 1 else ", ".join(fields[:-1]) + " and " + fields[-1]
            why = f"the model it returned has another {named} than that config"
        elif isinstance(got, dict) and not set(shapes) <= set(got):
            why = "its parameters are not those of the model asked for (another attention, or other modules?)"
        else:
            why = "its parameters' shapes are not the ones that config gives"
        return [f"{who} should build {what} from the config it is given: {why}"]
    return dropout_problems(view.get("dropouts"), config, want, who)


# --- configs and datasets ------------------------------------------------------------------------

def config_problems(fields, expected: dict, what: str) -> list[str]:
    """The TrainerConfig fields that differ from ``expected`` (named, never their values)."""
    if not isinstance(fields, dict) or all(v is None for v in fields.values()):
        return [f"{what} should return a TrainerConfig first"]
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
    return [f"{what}: these TrainerConfig fields differ from the handout: {', '.join(wrong)}"] if wrong else []


def both_configs(output, expected: dict, what: str) -> list[str]:
    """The config a glue function returned, then its Trainer's (the runs read the trainer's own: the same)."""
    if not isinstance(output, dict):
        return [f"{what}'s results did not come back"]
    return (config_problems(output.get("config"), expected, what)
            or config_problems(output.get("trainer_config"), expected, f"{what} (the Trainer's config)"))


def finetune_expected(inputs: dict, max_epochs: int) -> dict:
    documents = len(inputs["corpus"].split("\n"))
    return dict(HANDOUT, max_epochs=max_epochs, final_tokens=200 * documents * inputs["block_size"])


def dataset_problems(inputs: dict, view, what: str) -> list[str]:
    """The trainer's dataset must be a NameDataset of the given file: same length, same items."""
    pretrain = CharCorruptionDatasetBase(inputs["corpus"], inputs["block_size"])
    want = NameDataset(pretrain, inputs["train_text"])
    if not isinstance(view, dict) or view.get("length") != len(want):
        return [f"{what} should train on a NameDataset of the file named by finetune_corpus_path"]
    items = view.get("items")
    if not isinstance(items, list) or len(items) != len(inputs["item_indices"]):
        return [f"{what}: the training examples did not come back complete"]
    for i, item in zip(inputs["item_indices"], items):
        x, y = want[i]
        if not (isinstance(item, list) and len(item) == 2 and all(isinstance(t, torch.Tensor) for t in item)
                and torch.equal(item[0], x) and torch.equal(item[1], y)):
            return [f"{what} should train on a NameDataset of the file named by finetune_corpus_path"]
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
            "idx": token_ids(rng, model.head.out_features, world["block_size"])}


def finetune_config_probe(parts, inputs: dict) -> dict:
    """The model init on the config (shapes, dropout rates, logits with the given state); finetune without params
    (its configs and the trainer's dataset), then with a params file (its configs)."""
    with tempfile.TemporaryDirectory(prefix="glue-") as tmp:
        corpus_dataset, train_path, mconf = _toy_world(inputs, Path(tmp))
        model = parts.initialize_vanilla_model(mconf)
        out = {"model": model_view(model, inputs["state"], inputs["idx"])}
        config, trainer = _pair(parts.finetune(None, train_path, corpus_dataset, inputs["block_size"], model),
                                "finetune")
        out.update(config=_fields(config), trainer_config=_fields(trainer.config),
                   dataset=_dataset_view(trainer.train_dataset, inputs["item_indices"]))
        params = Path(tmp) / "pretrained.params"
        torch.save(inputs["state"], params)
        # finetune the course's GPT: the params fit it
        config, trainer = _pair(parts.finetune(str(params), train_path, corpus_dataset, inputs["block_size"],
                                               GPT(mconf)), "finetune")
        out["with_params"] = {"config": _fields(config), "trainer_config": _fields(trainer.config)}
        return out


def finetune_config_problems(inputs: dict, output) -> list[str]:
    """The model init builds the course's GPT from its config; finetune's configs without params (75 epochs)
    and with them (10 epochs) are the handout's, and it trains on a NameDataset of the file."""
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
            problems = ["initialize_vanilla_model should return the course's GPT (with its vanilla attention) built "
                        "from the config it is given: with the same params, its outputs differ"]
    return (problems or setup_problems(inputs, output, "finetune without pretraining", 75)
            or both_configs(output.get("with_params"), finetune_expected(inputs, 10),
                            "finetune after pretraining (given a params file)"))


def _step_config(fields) -> TrainerConfig | None:
    """A one-step TrainerConfig with the student's values of STEP_FIELDS (plain fields as a probe sends them), or
    None when they cannot make one."""
    defaults, chosen = TrainerConfig(), {}
    for name in STEP_FIELDS:
        value = fields.get(name) if isinstance(fields, dict) else None
        default = getattr(defaults, name)
        if name == "betas" and isinstance(value, list):
            value = tuple(value)
        number = isinstance(value, (int, float)) and not isinstance(value, bool)
        if value is None:
            continue
        if isinstance(value, type(default)) or (number and (isinstance(default, float) or name in TOKEN_COUNTS)):
            chosen[name] = value
        else:
            return None
    try:
        return TrainerConfig(**chosen, max_epochs=1, max_steps=1, num_workers=0, progress=False)
    except (TypeError, ValueError):
        return None


def one_step(inputs: dict, fields, state: dict) -> dict[str, torch.Tensor] | None:
    """The params one step of the course's Trainer gives the toy model from ``state`` on the finetuning file, with
    the step's fields of the student's config and the probe's seed (the judge's own step; the global generator is
    left as it was). None when the fields cannot make a TrainerConfig."""
    config = _step_config(fields)
    if config is None:
        return None
    pretrain = CharCorruptionDatasetBase(inputs["corpus"], inputs["block_size"])
    model = GPT(GPTConfig(pretrain.vocab_size, inputs["block_size"], **inputs["model"]))
    model.load_state_dict(state)
    with torch.random.fork_rng():
        torch.manual_seed(inputs.get("seed", 0))
        Trainer(model, NameDataset(pretrain, inputs["train_text"]), None, config).train()
    return _state(model)


def finetune_pretrained_probe(parts, inputs: dict) -> dict:
    """finetune with a params path, then one step of train(): the params before and after, and the file saved."""
    with tempfile.TemporaryDirectory(prefix="glue-") as tmp:
        corpus_dataset, train_path, mconf = _toy_world(inputs, Path(tmp))
        model = parts.initialize_vanilla_model(mconf)
        config, trainer = _pair(parts.finetune(inputs["params_file"], train_path, corpus_dataset,
                                               inputs["block_size"], model), "finetune")
        out = {"config": _fields(config), "trainer_config": _fields(trainer.config),
               "state_after_finetune": _state(model),
               "dataset": _dataset_view(trainer.train_dataset, inputs["item_indices"])}
        trainer.config.max_epochs, trainer.config.max_steps, trainer.config.num_workers = 1, 1, 0
        trainer.config.progress, trainer.config.ckpt_path = False, None
        # what the step runs with (the judge takes the same)
        out["trainer_config_run"] = _fields(trainer.config)
        saved = Path(tmp) / "trained.params"
        torch.manual_seed(inputs.get("seed", 0))
        try:
            parts.train(model, str(saved), trainer)
        except Exception as err:  # judged after the config and dataset, which may say why it failed
            out["train_error"] = type(err).__name__
        out["state_after_train"] = _state(model)
        out["saved"] = torch.load(saved, map_location="cpu", weights_only=True) if saved.is_file() else None
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
    before = _state(model)
    config, trainer = _pair(parts.pretrain(dataset, inputs["block_size"], model), "pretrain")
    data = getattr(trainer.train_dataset, "data", None)
    out = {"config": _fields(config), "trainer_config": _fields(trainer.config),
           "documents": list(data) if isinstance(data, list) else None}
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
        return [f"one step of the Trainer pretrain returned raised {error}"]
    if output.get("trained") is not True:
        return ["pretrain should return a Trainer that trains the model it is given (one step of that Trainer left "
                "the model's params unchanged: does it train a copy?)"]
    return []
