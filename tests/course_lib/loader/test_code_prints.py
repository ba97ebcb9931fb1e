"""Tests for course_lib/loader/code_prints.py: the print of a notebook's code changes with its code, not its text."""
from __future__ import annotations

import types

from course_lib.loader.code_prints import code_print, is_notebook_code


def _cell(source: str, module: str = "a_kernels_main") -> dict:
    """The names a cell defines in a module of no file (as a kernel's __main__ is)."""
    namespace = {"__name__": module}
    exec(compile(source, f"<cell {abs(hash(source))}>", "exec"), namespace)
    return namespace


GLUE = '''
STEPS = 75


def helper(n):
    return n * 2


def finetune(path, lr=6e-4):
    """Finetune."""
    return helper(STEPS) + len(path)
'''


def test_comments_and_blank_lines_leave_the_print_and_statements_change_it():
    """Is the print the same for the same code with other comments, blank lines and cell names, and another for a
    changed statement, default argument, constant or helper the part calls?"""
    same = code_print(_cell(GLUE)["finetune"])
    commented = GLUE.replace("    return helper", "    # the epochs, doubled\n\n    return helper")
    assert code_print(_cell(commented)["finetune"]) == same
    for changed in (GLUE.replace("+ len(path)", "- len(path)"), GLUE.replace("lr=6e-4", "lr=6e-3"),
                    GLUE.replace("STEPS = 75", "STEPS = 74"), GLUE.replace("n * 2", "n * 3")):
        assert code_print(_cell(changed)["finetune"]) != same, changed


def test_a_class_prints_its_methods_and_the_notebook_classes_it_builds_on():
    """Does a class's print follow its own methods and its notebook base class, but not a library base class?"""
    source = '''
import torch


class Base(torch.nn.Module):
    def forward(self, x):
        return x


class Mine(Base):
    scale = 2

    def forward(self, x):
        return super().forward(x) * self.scale


def initialize(config):
    return Mine()
'''
    same = code_print(_cell(source)["initialize"])
    assert code_print(_cell(source.replace("return x\n", "return -x\n"))["initialize"]) != same
    assert code_print(_cell(source.replace("scale = 2", "scale = 3"))["initialize"]) != same
    assert is_notebook_code(_cell(source)["Mine"]) and not is_notebook_code(_cell(source)["torch"].nn.Module)


def test_notebook_code_is_a_kernels_or_the_loaders_not_a_librarys():
    """Are a kernel's and a loaded notebook's definitions notebook code, and library and builtin ones not?"""
    import course_lib.gpt.model as library

    assert is_notebook_code(_cell(GLUE)["finetune"])
    loaded = types.ModuleType("loaded_notebook")
    loaded.__file__ = "/somewhere/02_finetune_without_pretraining.ipynb"
    import sys

    sys.modules["loaded_notebook"] = loaded
    try:
        assert is_notebook_code(_cell(GLUE, "loaded_notebook")["finetune"])
    finally:
        del sys.modules["loaded_notebook"]
    assert not is_notebook_code(library.GPT) and not is_notebook_code(len)
