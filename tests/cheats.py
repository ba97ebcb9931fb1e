"""Cheats that need no notebook of their own: run files a student could hand in that the course's code never makes.

Trained once per test session by conftest.py's ``cheat_runs``, for tests/autograder/grading/test_audit.py (the audit
retrains and flags them) and test_plausibility.py (the ceiling flags them without retraining).
"""
from __future__ import annotations

import re

import torch

from course_lib.data_files import read_birth_places
from course_lib.gpt.datasets import CharCorruptionDatasetBase, NameDataset
from course_lib.gpt.evaluation import predict_places, write_predictions
from course_lib.gpt.model import GPT, GPTConfig
from course_lib.gpt.trainer import Trainer, TrainerConfig
from course_lib.presets import get_preset

BORN = re.compile(r"[Bb]orn(?: \d+)? in (\w+)|born\? In (\w+)")


def labelled_by_regex(wiki: str, questions: list[str]) -> str:
    """Finetuning lines for ``questions``, each place read off the person's biography: the cheat's data."""
    lines = []
    for question in questions:
        name = question.removeprefix("Where was ").removesuffix(" born?")
        bio = next((line for line in wiki.split("\n") if line.startswith(name + ".")), "")
        found = BORN.search(bio)
        if found:
            lines.append(f"{question}\t{found.group(1) or found.group(2)}")
    return "\n".join(lines) + "\n"


def trained_on_the_answers(outputs, world_dir) -> None:
    """Replace the vanilla pretrained run's params (and its predictions) with a model finetuned on test and dev."""
    preset = get_preset("smoke")
    wiki = (world_dir / "wiki.txt").read_text(encoding="utf-8")
    vocab_source = CharCorruptionDatasetBase(wiki, preset.block_size)
    model = GPT(GPTConfig(vocab_source.vocab_size, preset.block_size, **preset.model))
    model.load_state_dict(torch.load(outputs / "vanilla.finetune.params", weights_only=True))
    questions = {split: [e.question for e in read_birth_places(world_dir / name)]
                 for split, name in (("dev", "birth_dev.tsv"), ("test", "birth_test_inputs.tsv"))}
    cheat = NameDataset(vocab_source, labelled_by_regex(wiki, questions["dev"] + questions["test"]))
    torch.manual_seed(0)
    Trainer(model, cheat, None, TrainerConfig(max_epochs=40, batch_size=64, learning_rate=1e-2, lr_decay=False,
                                              num_workers=0, progress=False)).train()
    model.eval()
    torch.save(model.state_dict(), outputs / "vanilla.finetune.params")
    for split, name in (("dev", "vanilla.pretrain.dev.predictions"), ("test", "vanilla.pretrain.test.predictions")):
        write_predictions(predict_places(model, vocab_source.vocab, questions[split], 256), outputs / name)
