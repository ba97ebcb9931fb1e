"""The glue's training, checked (notebook 02): finetune loads the params it is given, train() trains once and saves.

02's public check (``02-glue-config``) and its hidden one (``02-glue-pretrained``) both call finetune with a params
file, then train() with the trainer finetune returned, cut to one step (``train_probe``). The judge takes that step
itself with the course's Trainer from the same params (``one_step``) and holds train() to it (``train_problems``):
the given model trained (not a copy), by one step (not two), then saved, after training, to writing_params_path
(not another file). The model trained there has no dropout, so one step is the same whatever else draws from
torch's generator. Nothing here needs the reference solution: the step is the course's own Trainer's.
"""
from __future__ import annotations

import contextlib
import dataclasses
import math
from pathlib import Path

import torch
from torch import nn

from course_lib.checks.common import PLAIN
from course_lib.gpt.datasets import CharCorruptionDatasetBase, NameDataset
from course_lib.gpt.model import GPT, GPTConfig
from course_lib.gpt.trainer import Trainer, TrainerConfig

TRAINER_FIELDS = [f.name for f in dataclasses.fields(TrainerConfig)]
TOKEN_COUNTS = frozenset({"warmup_tokens", "final_tokens"})  # ints a whole float may stand for
DROPOUT_FIELDS = ("embd_pdrop", "resid_pdrop", "attn_pdrop")
# fields that shape a training step's arithmetic: the judge's own step takes the student's values
STEP_FIELDS = ("batch_size", "learning_rate", "lr_decay", "warmup_tokens", "final_tokens", "betas", "grad_norm_clip",
               "weight_decay", "decay_matrices_only", "shuffle", "trim_padding", "length_buckets", "autocast_bf16",
               "fused_adamw")
SAVED = "trained.params"  # the writing_params_path train() is given, in the probe's own folder
STEP_SLACK = 0.25  # of one step's length: another thread count rounds a step by far less, two steps are a whole one


def trainer_fields(config) -> dict:
    """Every TrainerConfig field the object has, as plain values (absent ones as None)."""
    out = {}
    for name in TRAINER_FIELDS:
        value = getattr(config, name, None)
        out[name] = value if isinstance(value, PLAIN) else list(value) if isinstance(value, tuple) else repr(value)
    return out


def state_of(model: nn.Module) -> dict[str, torch.Tensor]:
    return {k: v.detach().cpu().clone() for k, v in model.state_dict().items()}


def still_config(world: dict, vocab_size: int) -> GPTConfig:
    """The toy world's model config without dropout: the model train() trains a step (the same step on every run)."""
    return GPTConfig(vocab_size, world["block_size"], **dict(world["model"], **dict.fromkeys(DROPOUT_FIELDS, 0.0)))


# --- the probe: train() on a trainer cut to one step ----------------------------------------------

def train_probe(train, model: nn.Module, trainer, folder: Path, seed: int) -> dict:
    """train(model, folder/SAVED, trainer) with the trainer cut to one step (its own config otherwise, no loader
    workers, no checkpoint file), run in ``folder`` so a file saved elsewhere lands there: what the step ran with,
    the model's params after it, the file at writing_params_path (None if absent, "unreadable" if not a state_dict)
    and the error's type if train() raised."""
    config = trainer.config
    config.max_epochs, config.max_steps, config.num_workers, config.progress = 1, 1, 0, False
    config.ckpt_path = None
    out = {"trainer_config_run": trainer_fields(config)}
    saved = Path(folder) / SAVED
    torch.manual_seed(seed)
    with contextlib.chdir(folder):
        try:
            train(model, str(saved), trainer)
        except NotImplementedError as err:
            if _raised_by(err, train):
                raise  # train() itself not written yet: the cell says so, and the grader
            out["train_error"] = type(err).__name__  # from what it trained on (03's dataset not written, ...)
        except Exception as err:  # judged after the config and dataset, which may say why it failed
            out["train_error"] = type(err).__name__
    out["state_after_train"] = state_of(model)
    try:
        out["saved"] = torch.load(saved, map_location="cpu", weights_only=True) if saved.is_file() else None
    except Exception:  # a pickled module, or not a torch file at all
        out["saved"] = "unreadable"
    return out


def _raised_by(err: BaseException, function) -> bool:
    """Whether ``err`` was raised in ``function``'s own body (its innermost frame), not in what it called."""
    tb, code = err.__traceback__, getattr(function, "__code__", None)
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    return tb is not None and tb.tb_frame.f_code is code


# --- the judge's own step -------------------------------------------------------------------------

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
    """The params one step of the course's Trainer gives the toy model (no dropout) from ``state`` on the finetuning
    file, with the step's fields of the student's config and the probe's seed (the global generator is left as it
    was). None when the fields cannot make a TrainerConfig."""
    config = _step_config(fields)
    if config is None:
        return None
    pretrain = CharCorruptionDatasetBase(inputs["corpus"], inputs["block_size"])
    with torch.random.fork_rng():  # the model's init draws too
        model = GPT(still_config(inputs, pretrain.vocab_size))
        model.load_state_dict(state)
        torch.manual_seed(inputs.get("seed", 0))
        Trainer(model, NameDataset(pretrain, inputs["train_text"]), None, config).train()
    return state_of(model)


def _shaped_like(got, want: dict) -> bool:
    """``got`` holds a tensor of each of ``want``'s names and shapes, and nothing else."""
    return isinstance(got, dict) and set(got) == set(want) and all(
        isinstance(got[k], torch.Tensor) and got[k].shape == v.shape for k, v in want.items())


def same_state(got, want: dict) -> bool:
    return _shaped_like(got, want) and all(torch.equal(got[k], v) for k, v in want.items())


def _distance(a: dict, b: dict) -> float:
    return math.sqrt(sum(float((a[k].double() - b[k].double()).pow(2).sum()) for k in b))


def _one_step_apart(inputs: dict, fields, before: dict, after: dict) -> bool:
    """``after`` is one step of the trainer from ``before``: within STEP_SLACK of that step's length of the judge's
    own step. True when the judge cannot take the step (fields it cannot rebuild): the other checks decide then."""
    want = one_step(inputs, fields, before)
    return want is None or set(want) != set(after) or (
        _shaped_like(after, want) and _distance(after, want) <= STEP_SLACK * _distance(want, before))


# --- the judges -----------------------------------------------------------------------------------

def loaded_problems(got, params: dict) -> list[str]:
    """finetune, given a params file, left those params in the model it was given."""
    if same_state(got, params):
        return []
    return ["finetune did not load the pretrained params into the model it is given (load_params)"]


def train_problems(inputs: dict, output: dict, before: dict) -> list[str]:
    """train() trained the given model from ``before`` (its params after finetune) by one step of the trainer it was
    given, then saved those params to writing_params_path."""
    saved, after, error = output.get("saved"), output.get("state_after_train"), output.get("train_error")
    if saved is None and isinstance(error, str) and error.isidentifier():
        return [f"train() raised {error} on one step of the trainer finetune returned"]
    if not _shaped_like(after, before):
        return ["train() should train the model it is given"]
    if all(torch.equal(after[k], v) for k, v in before.items()):
        return ["train() should train the model it is given (one step of its trainer left the params unchanged)"]
    if not _one_step_apart(inputs, output.get("trainer_config_run"), before, after):
        return ["train() should call the trainer it is given once: with that trainer cut to one step, the params "
                "train() left are not those of one step"]
    if saved is None:
        return ["train() should save the params to writing_params_path: nothing was saved there"]
    if not isinstance(saved, dict) or set(saved) != set(after):
        return ["train() should save the model's state_dict to writing_params_path (save_params does): the file "
                "there is something else"]
    if not same_state(saved, after):
        return ["train() should save the model's params after training it"]
    return []
