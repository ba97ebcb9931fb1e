"""Which errors are a process running out of memory, and is none of a student's own code run to tell?"""
from __future__ import annotations

import pytest
import torch

from autograder.inside.out_of_memory import ran_out_of_memory


def _refused() -> RuntimeError:
    """torch's own error when its CPU allocator cannot have the memory (4 PB of float32 here)."""
    with pytest.raises(RuntimeError) as caught:
        torch.empty(2 ** 50)
    return caught.value


def test_memoryerror_and_torchs_refused_allocation_are_out_of_memory():
    """Are Python's MemoryError and torch's RuntimeError for a refused allocation both out of memory?"""
    assert ran_out_of_memory(MemoryError())
    assert type(_refused()) is RuntimeError and ran_out_of_memory(_refused())


def test_other_errors_and_students_look_alikes_are_not():
    """Are other RuntimeErrors, a student's subclass in torch's words, and an argument that is no str not out of
    memory, without calling the argument's __str__?"""
    class Mine(RuntimeError):
        pass

    class Loud:
        def __str__(self):
            raise AssertionError("a student's __str__ ran")

    assert not ran_out_of_memory(RuntimeError("shape mismatch"))
    assert not ran_out_of_memory(Mine(*_refused().args))
    assert not ran_out_of_memory(RuntimeError(Loud()))
    assert not ran_out_of_memory(ValueError("can't allocate memory"))
