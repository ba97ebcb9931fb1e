"""Checks of the checks of the glue part (02's initialize_vanilla_model, finetune and train, 04's pretrain:
course_lib/checks/glue.py, and the hidden 02-glue-pretrained).

A right glue written other ways passes 02-glue-config, 02-glue-pretrained and 04-pretrain-config on fresh inputs,
and plausible wrong glue fails the check it breaks with a message naming what is wrong, graded as the grader
grades it (tests/check_grading.py). tests/autograder/checks/test_verdicts.py and
benchmarks/check_false_rejection.py load this file for its answers (finetune_written_by_hand, GLUE_VALID,
PRETRAIN_VALID, ...).
"""
from __future__ import annotations

import copy
import dataclasses
import functools
from pathlib import Path

import check_grading
import pytest
import torch
from check_grading import SEEDS, assert_fails, with_parts

from course_lib.data_files import read_text
from course_lib.gpt.attention import CausalSelfAttention
from course_lib.gpt.checkpoint import load_params
from course_lib.gpt.datasets import CharCorruptionDatasetBase, NameDataset
from course_lib.gpt.model import GPT, GPTConfig
from course_lib.gpt.trainer import Trainer, TrainerConfig

# the shared fixtures, bound here for pytest to find them (imported by name, ruff would call them unused, then
# redefined by each test's arguments)
grade, prepared = check_grading.grade, check_grading.prepared


# --- the glue: finetune (02) and pretrain (04) --------------------------------------------------------

def finetune_written_by_hand(reading_params_path, finetune_corpus_path, pretrain_dataset, block_size, model,
                             finetune_lr=6e-4, *, epochs=(75, 10), lr=None, batch_size=256, warmup_tokens=512 * 20,
                             lr_decay=True, num_workers=4, final_tokens=None, dataset="name", load="given",
                             trainer_config="same", after=None):
    """The finetune glue with each choice a parameter; the defaults are a right answer. ``after``: TrainerConfig
    fields that differ after pretraining only (given a params path)."""
    if reading_params_path is not None and load == "given":
        load_params(model, reading_params_path)
    elif reading_params_path is not None and load == "copy":
        load_params(copy.deepcopy(model), reading_params_path)
    name_dataset = NameDataset(pretrain_dataset, read_text(finetune_corpus_path))
    if final_tokens is None:
        final_tokens = 200 * len(pretrain_dataset) * block_size
    elif final_tokens == "finetuning file":
        final_tokens = 200 * len(name_dataset) * block_size
    elif final_tokens == "block size typed in":
        final_tokens = 200 * len(pretrain_dataset) * 128
    config = TrainerConfig(max_epochs=epochs[reading_params_path is not None], batch_size=batch_size,
                           learning_rate=finetune_lr if lr is None else lr, lr_decay=lr_decay,
                           warmup_tokens=warmup_tokens, final_tokens=final_tokens, num_workers=num_workers)
    if reading_params_path is not None and after:
        config = dataclasses.replace(config, **after)
    train_dataset = name_dataset if dataset == "name" else pretrain_dataset
    trainer = Trainer(model, train_dataset, None, config if trainer_config == "same" else TrainerConfig())
    return config, trainer


def finetune_reordered(reading_params_path, finetune_corpus_path, pretrain_dataset, block_size, model,
                       finetune_lr=0.0006):
    """Keywords in another order, final_tokens from .data, the file read with open(), the Trainer with keywords."""
    tconf = TrainerConfig(num_workers=4, final_tokens=200 * len(pretrain_dataset.data) * block_size,
                          warmup_tokens=10240, lr_decay=True, learning_rate=finetune_lr, batch_size=256,
                          max_epochs=75 if reading_params_path is None else 10)
    with open(finetune_corpus_path, encoding="utf-8") as f:
        questions = NameDataset(pretrain_dataset, f.read())
    trainer = Trainer(model=model, train_dataset=questions, test_dataset=None, config=tconf)
    if reading_params_path:  # after the trainer is built: still before any training
        model.load_state_dict(torch.load(reading_params_path, map_location="cpu", weights_only=True))
    return tconf, trainer


def finetune_fields_set_later(reading_params_path, finetune_corpus_path, pretrain_dataset, block_size, model,
                              finetune_lr=6e-4):
    """A default TrainerConfig with its fields set one by one; block size read from the dataset."""
    tconf = TrainerConfig()
    tconf.max_epochs = 10 if reading_params_path else 75
    tconf.batch_size, tconf.learning_rate, tconf.lr_decay = 256, finetune_lr, True
    tconf.warmup_tokens = 512 * 20
    tconf.final_tokens = 200 * len(pretrain_dataset) * pretrain_dataset.block_size
    tconf.num_workers = 4
    if reading_params_path:
        model.load_state_dict(torch.load(reading_params_path, weights_only=True))
    return tconf, Trainer(model, NameDataset(pretrain_dataset, Path(finetune_corpus_path).read_text()), None, tconf)


def train_with_torch_save(model, writing_params_path, trainer):
    trainer.train()
    torch.save(model.state_dict(), writing_params_path)


def train_without_saving(model, writing_params_path, trainer):
    trainer.train()


def train_saving_trainer_model(model, writing_params_path, trainer):
    """The trainer's own model (the same object), saved with its tensors moved to the CPU by hand."""
    trainer.train()
    torch.save({k: v.cpu() for k, v in trainer.model.state_dict().items()}, writing_params_path)


def train_a_copy(model, writing_params_path, trainer):
    """A fresh Trainer on a copy of the model: the copy is trained and saved, the model given is not."""
    twin = Trainer(copy.deepcopy(model), trainer.train_dataset, None, trainer.config)
    twin.train()
    torch.save(twin.model.state_dict(), writing_params_path)


def train_saving_elsewhere(model, writing_params_path, trainer):
    """The params saved under the run's file name in the current folder, not at writing_params_path."""
    trainer.train()
    torch.save(model.state_dict(), "vanilla.model.params")


def train_saving_untrained(model, writing_params_path, trainer):
    """Saves without training (trainer.train() left out)."""
    torch.save(model.state_dict(), writing_params_path)


def train_twice(model, writing_params_path, trainer):
    """trainer.train() called twice (a second run of every epoch)."""
    trainer.train()
    trainer.train()
    torch.save(model.state_dict(), writing_params_path)


def init_without_dropout(mconf):
    return GPT(dataclasses.replace(mconf, embd_pdrop=0.0, resid_pdrop=0.0, attn_pdrop=0.0))


def init_of_the_handout(mconf):
    """The handout's model (block 128, 4 layers of 256) whatever the config says."""
    return GPT(GPTConfig(mconf.vocab_size, 128))


def init_in_eval_mode(mconf):
    return GPT(mconf).eval()


def train_saving_first(model, writing_params_path, trainer):
    torch.save(model.state_dict(), writing_params_path)
    trainer.train()


def train_saving_the_module(model, writing_params_path, trainer):
    trainer.train()
    torch.save(model, writing_params_path)


INIT_VALID = {
    "GPT(mconf)": lambda mconf: GPT(mconf),
    "keywords, CausalSelfAttention named": lambda mconf: GPT(config=mconf, attention_class=CausalSelfAttention),
    "manual attention_impl": lambda mconf: GPT(dataclasses.replace(mconf, attention_impl="manual")),
}
GLUE_VALID = {  # name: overrides of the reference parts
    "reference": {},
    "reordered keywords, Trainer by keyword, lr 0.0006": {"finetune": finetune_reordered},
    "fields set one by one": {"finetune": finetune_fields_set_later},
    "spelled out by hand": {"finetune": finetune_written_by_hand},
    "train saves with torch.save": {"train": train_with_torch_save},
    "train saves trainer.model": {"train": train_saving_trainer_model},
    "warmup tokens as a whole float (512 * 20.0)": {"finetune": functools.partial(finetune_written_by_hand,
                                                                                   warmup_tokens=512 * 20.0)},
    **{f"init {k}": {"initialize_vanilla_model": v} for k, v in INIT_VALID.items()},
}
FT = finetune_written_by_hand
# name: (overrides, {grade_id: what the message must say, in its first 80 characters}); a grade_id not listed is not
# asserted for that variant
PUBLIC_AND_HIDDEN = ("02-glue-config", "02-glue-pretrained")


def _both(expect: str) -> dict[str, str]:
    return dict.fromkeys(PUBLIC_AND_HIDDEN, expect)


GLUE_WRONG = {
    "lr 6e-3 for finetuning": ({"finetune": functools.partial(FT, finetune_lr=6e-3)}, _both("learning_rate is not")),
    "75 epochs after pretraining": ({"finetune": functools.partial(FT, epochs=(75, 75))},
                                    _both("finetune (given a params file): max_epochs is not the handout's")),
    "10 epochs without pretraining": ({"finetune": functools.partial(FT, epochs=(10, 10))},
                                      {"02-glue-config": "finetune (no params file): max_epochs is not"}),
    "final_tokens from the finetuning file": ({"finetune": functools.partial(FT, final_tokens="finetuning file")},
                                              _both("final_tokens is not the handout's")),
    "warmup 512*2": ({"finetune": functools.partial(FT, warmup_tokens=512 * 2)}, _both("warmup_tokens is not")),
    "lr_decay forgotten": ({"finetune": functools.partial(FT, lr_decay=False)}, _both("lr_decay is not")),
    "batch 128": ({"finetune": functools.partial(FT, batch_size=128)}, _both("batch_size is not")),
    "no loader workers": ({"finetune": functools.partial(FT, num_workers=0)}, _both("num_workers is not")),
    "trains on the pretraining dataset": ({"finetune": functools.partial(FT, dataset="pretrain")},
                                          _both("train on a NameDataset of the finetuning file")),
    "Trainer given a default config": ({"finetune": functools.partial(FT, trainer_config="default")},
                                       _both("give its Trainer the TrainerConfig it returns")),
    "params not loaded": ({"finetune": functools.partial(FT, load="never")},
                          _both("finetune did not load the pretrained params")),
    "params loaded into a copy": ({"finetune": functools.partial(FT, load="copy")},
                                  _both("finetune did not load the pretrained params")),
    "train() does not save": ({"train": train_without_saving},
                              _both("train() should save the params to writing_params_path")),
    "train() saves to another path": ({"train": train_saving_elsewhere},
                                      _both("train() should save the params to writing_params_path")),
    "train() saves without training": ({"train": train_saving_untrained},
                                       _both("train() should train the model it is given")),
    "train() trains a copy of the model": ({"train": train_a_copy},
                                           _both("train() should train the model it is given")),
    "train() saves before training": ({"train": train_saving_first},
                                      _both("train() should save the model's params after training it")),
    "train() saves the module": ({"train": train_saving_the_module},
                                 _both("train() should save the model's state_dict")),
    "init builds a synthesizer GPT": ({"initialize_vanilla_model": None},
                                      {"02-glue-config": "initialize_vanilla_model: another attention"}),
    "init turns dropout off": ({"initialize_vanilla_model": init_without_dropout},
                               {"02-glue-config": "initialize_vanilla_model: embd_pdrop, resid_pdrop and attn_pdrop "
                                                  "differ"}),
    "init ignores the config (the handout's model)": (
        {"initialize_vanilla_model": init_of_the_handout},
        {"02-glue-config": "another block_size, n_layer and n_embd"}),
    "final_tokens with the block size typed in (128)": (
        {"finetune": functools.partial(FT, final_tokens="block size typed in")}, _both("final_tokens is not")),
    "lr 6e-3 after pretraining": ({"finetune": functools.partial(FT, after={"learning_rate": 6e-3})},
                                  _both("finetune (given a params file): learning_rate is not the handout's")),
    "batch 128 after pretraining": ({"finetune": functools.partial(FT, after={"batch_size": 128})},
                                    _both("finetune (given a params file): batch_size is not the handout's")),
    "train() trains twice": ({"train": train_twice}, _both("train() should call the trainer it is given once")),
}
GLUE_IDS = ("02-glue-config", "02-glue-pretrained")
# seeds whose toy worlds have a corpus and a finetuning file of different lengths (see the final_tokens test below)
GLUE_WRONG_SEEDS = (1, 3)
GLUE_MESSAGE_BUGS: dict[str, str] = {}  # wrong answers told the wrong thing (none now)


@pytest.mark.parametrize("name", list(GLUE_VALID))
def test_finetune_valid_variant_passes_both_glue_checks(reference, grade, name):
    """Does a right finetune glue written another way pass 02-glue-config and 02-glue-pretrained?"""
    parts = with_parts(reference, **GLUE_VALID[name])
    for grade_id in GLUE_IDS:
        for seed in SEEDS:
            assert grade(grade_id, parts, seed) == [], (grade_id, name, seed)


def _glue_wrong_params():
    for name, (_, expected) in GLUE_WRONG.items():
        marks = [pytest.mark.xfail(strict=True, reason=GLUE_MESSAGE_BUGS[name])] if name in GLUE_MESSAGE_BUGS else []
        for grade_id, expect in expected.items():
            yield pytest.param(grade_id, name, expect, marks=marks, id=f"{grade_id}-{name}")


@pytest.mark.parametrize(("grade_id", "name", "expect"), list(_glue_wrong_params()))
def test_finetune_wrong_variant_fails_with_its_hint(reference, grade, grade_id, name, expect):
    """Does a plausible wrong finetune glue fail the check it breaks, naming what is wrong?"""
    overrides = dict(GLUE_WRONG[name][0])
    if overrides.get("initialize_vanilla_model", 0) is None:
        overrides["initialize_vanilla_model"] = lambda mconf: GPT(mconf, reference.SynthesizerAttention)
    parts = with_parts(reference, **overrides)
    for seed in GLUE_WRONG_SEEDS:
        assert_fails(grade(grade_id, parts, seed), expect)


@pytest.mark.parametrize(("grade_id", "seed"), [("02-glue-config", 15), ("02-glue-pretrained", 0)])
def test_final_tokens_from_the_finetuning_file_fails_on_every_fresh_input(reference, grade, prepared, grade_id, seed):
    """Does a fresh corpus never have as many documents as the finetuning file has questions, so that mistake fails?"""
    world = prepared(seed)[0][grade_id]
    assert len(world["corpus"].split("\n")) != len(world["train_text"].split("\n")) - 1
    parts = with_parts(reference, **GLUE_WRONG["final_tokens from the finetuning file"][0])
    assert_fails(grade(grade_id, parts, seed), "final_tokens")


def test_finetune_config_check_sees_loading_and_train_as_the_hidden_check_does(reference, grade):
    """Does 02's public check fail each wrong answer about loading params, training and saving that the hidden
    check fails, with the same words (issue 51: they passed the public cell and lost the hidden points)?"""
    for name in ("params not loaded", "params loaded into a copy", "train() does not save", "train() saves the module",
                 "train() trains twice", "train() trains a copy of the model", "train() saves to another path",
                 "train() saves without training"):
        parts = with_parts(reference, **GLUE_WRONG[name][0])
        public, hidden = (grade(grade_id, parts, 0) for grade_id in PUBLIC_AND_HIDDEN)
        assert public and public == hidden, (name, public, hidden)


def test_the_model_in_eval_mode_passes(reference, grade):
    """Does an init that returns the model in eval mode pass (the trainer puts it in training mode itself)?"""
    parts = with_parts(reference, initialize_vanilla_model=init_in_eval_mode)
    for grade_id in GLUE_IDS:
        assert grade(grade_id, parts, 0) == [], grade_id


def pretrain_written_by_hand(pretrain_dataset, block_size, model, pretrain_lr=6e-3, *, epochs=650, batch_size=128,
                             lr=None, warmup_tokens=512 * 20, lr_decay=True, num_workers=4, final_tokens=None,
                             dataset=None, trainer_config="same", model_copy=False):
    """The pretrain glue with each choice a parameter; the defaults are a right answer."""
    config = TrainerConfig(max_epochs=epochs, batch_size=batch_size, learning_rate=pretrain_lr if lr is None else lr,
                           lr_decay=lr_decay, warmup_tokens=warmup_tokens,
                           final_tokens=200 * len(pretrain_dataset) * block_size if final_tokens is None
                           else final_tokens, num_workers=num_workers)
    train_dataset = pretrain_dataset if dataset is None else dataset(pretrain_dataset, block_size)
    trained = copy.deepcopy(model) if model_copy else model
    return config, Trainer(trained, train_dataset, None, config if trainer_config == "same" else TrainerConfig())


def pretrain_reordered(pretrain_dataset, block_size, model, pretrain_lr=0.006):
    tconf = TrainerConfig(num_workers=4, final_tokens=200 * len(pretrain_dataset.data) * block_size,
                          warmup_tokens=10240, lr_decay=True, learning_rate=pretrain_lr, batch_size=128,
                          max_epochs=650)
    return tconf, Trainer(model=model, train_dataset=pretrain_dataset, test_dataset=None, config=tconf)


def pretrain_config_copy(pretrain_dataset, block_size, model, pretrain_lr=6e-3):
    """The Trainer gets its own copy of the config."""
    tconf = TrainerConfig(max_epochs=650, batch_size=128, learning_rate=pretrain_lr, lr_decay=True,
                          warmup_tokens=512 * 20, final_tokens=200 * len(pretrain_dataset) * block_size,
                          num_workers=4)
    return tconf, Trainer(model, pretrain_dataset, None, dataclasses.replace(tconf))


def _another_text(pretrain_dataset, block_size):
    """A span-corruption dataset the glue builds itself from another text."""
    return CharCorruptionDatasetBase("Some other text\nthat is not the corpus given", block_size)


PT = pretrain_written_by_hand
PRETRAIN_VALID = {"reference": {}, "reordered keywords, Trainer by keyword, lr 0.006": {"pretrain": pretrain_reordered},
                  "spelled out by hand": {"pretrain": pretrain_written_by_hand},
                  "config copied for the Trainer": {"pretrain": pretrain_config_copy}}
PRETRAIN_WRONG = {
    "lr 6e-4 (the finetuning rate)": (functools.partial(PT, pretrain_lr=6e-4), "pretrain: learning_rate is not"),
    "batch 256": (functools.partial(PT, batch_size=256), "pretrain: batch_size is not"),
    "75 epochs": (functools.partial(PT, epochs=75), "pretrain: max_epochs is not"),
    "warmup 512*2": (functools.partial(PT, warmup_tokens=512 * 2), "pretrain: warmup_tokens is not"),
    "lr_decay forgotten": (functools.partial(PT, lr_decay=False), "pretrain: lr_decay is not"),
    "final_tokens of the original corpus hard-coded": (functools.partial(PT, final_tokens=75_212_800),
                                                       "pretrain: final_tokens is not"),
    "no loader workers": (functools.partial(PT, num_workers=0), "pretrain: num_workers is not"),
    "Trainer given a default config": (functools.partial(PT, trainer_config="default"),
                                       "pretrain: give its Trainer the TrainerConfig it returns"),
    "trains on a dataset of another text": (functools.partial(PT, dataset=_another_text),
                                            "should train on the pretraining dataset it is given"),
    "final_tokens with the block size typed in (128)": (
        lambda dataset, block_size, model, pretrain_lr=6e-3: PT(dataset, block_size, model, pretrain_lr,
                                                               final_tokens=200 * len(dataset) * 128),
        "pretrain: final_tokens is not"),
    "trains a deep copy of the model": (functools.partial(PT, model_copy=True),
                                        "its Trainer should train the model it is given, not a copy"),
}


@pytest.mark.parametrize("name", list(PRETRAIN_VALID))
def test_pretrain_valid_variant_passes(reference, grade, name):
    """Does a right pretrain glue written another way pass 04-pretrain-config on fresh inputs?"""
    parts = with_parts(reference, **PRETRAIN_VALID[name])
    for seed in SEEDS:
        assert grade("04-pretrain-config", parts, seed) == [], (name, seed)


@pytest.mark.parametrize("name", list(PRETRAIN_WRONG))
def test_pretrain_wrong_variant_fails_with_its_hint(reference, grade, name):
    """Does a plausible wrong pretrain glue fail 04-pretrain-config, naming what is wrong?"""
    pretrain, expect = PRETRAIN_WRONG[name]
    for seed in SEEDS[:2]:
        assert_fails(grade("04-pretrain-config", with_parts(reference, pretrain=pretrain), seed), expect)
