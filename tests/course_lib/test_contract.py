"""Tests for course_lib/contract.py: the names a student's notebooks must define, checked in one place."""
from __future__ import annotations

import json
import types

import pytest
from conftest import SOLUTIONS

from autograder.checks.registry import CHECKS
from course_lib.contract import PARTS, ContractError, StudentParts
from course_lib.gpt.datasets import CharCorruptionDatasetBase
from course_lib.gpt.model import GPTConfig
from course_lib.runs import REQUIRED


def test_every_name_the_runs_and_the_grader_ask_for_is_a_part():
    """Do the runs and every registry check ask only for names the contract lists?"""
    asked = {n for names in REQUIRED.values() for n in names} | {n for c in CHECKS for n in c.needs}
    assert asked <= set(PARTS), asked - set(PARTS)


@pytest.mark.parametrize("name", sorted(PARTS))
def test_each_part_is_written_in_the_notebook_the_contract_names(name):
    """Does the solutions notebook the contract points students to define that name?"""
    part = PARTS[name]
    cells = json.loads((SOLUTIONS / f"{part.notebook}.ipynb").read_text(encoding="utf-8"))["cells"]
    written = {"class": f"class {name}", "function": f"def {name}", "value": f"{name} ="}[part.kind]
    assert any(written in "".join(c["source"]) for c in cells if c["cell_type"] == "code")


def test_each_check_needs_only_parts_of_its_notebook_or_earlier_ones():
    """Does every autograded cell ask only for parts written in its own notebook or before it?"""
    for check in CHECKS:
        assert all(PARTS[n].notebook <= check.notebook for n in check.needs), check.grade_id


def test_a_missing_part_names_the_notebook_to_write_it_in():
    """Is a missing part reported with the notebook where it is written, and every missing one listed?"""
    parts = StudentParts({"train": lambda *a: None})
    with pytest.raises(ContractError) as err:
        parts.require(["finetune", "train", "pretrain"])
    text = str(err.value)
    assert "finetune (write it in 02_finetune_without_pretraining" in text
    assert "pretrain (write it in 04_pretrain_then_finetune" in text and "train (" not in text.replace("pretrain (", "")


def test_parts_of_the_wrong_kind_are_told_so():
    """Is a string where a function belongs, or an instance where a class belongs, named with its type?"""
    parts = StudentParts({"finetune": "todo", "CharCorruptionDataset": object()})
    problems = parts.problems(["finetune", "CharCorruptionDataset"])
    assert problems == ["finetune should be a function, not str", "CharCorruptionDataset should be a class, not object"]


def test_the_dataset_class_falls_back_to_the_base_before_it_is_written():
    """Before notebook 03 is written, does finetuning get the base dataset (the vocabulary only)?"""
    assert StudentParts(types.SimpleNamespace()).dataset_class() is CharCorruptionDatasetBase


def test_a_model_that_is_not_a_module_and_a_trainer_that_is_not_returned_are_refused():
    """Are initialize_*_model returning a non-module and pretrain returning no (config, Trainer) told apart?"""
    parts = StudentParts({"initialize_vanilla_model": lambda config: "GPT", "pretrain": lambda *a: None})
    with pytest.raises(ContractError, match="initialize_vanilla_model returned str, expected a torch module"):
        parts.model("vanilla", GPTConfig(10, 8, n_layer=1, n_head=1, n_embd=4))
    with pytest.raises(ContractError, match=r"pretrain must return \(TrainerConfig, Trainer\); got NoneType"):
        parts.pretrain(None, 8, None)


def test_the_reference_solutions_satisfy_the_whole_contract(reference):
    """Do the instructor's notebooks define every part, each of the right kind?"""
    assert StudentParts(reference).problems(PARTS) == []
