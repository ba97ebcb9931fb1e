"""The grader's own run of one check: is a probe that torch refused memory said to have run out of memory?"""
from __future__ import annotations

import pytest
import torch

from autograder.checks import registry
from autograder.grading import one_check


@pytest.mark.parametrize("grade_id", ["03-span-hidden", "07-a-test"])
def test_a_probe_refused_memory_by_torch_says_so_and_other_errors_say_raised(grade_id):
    """Does a probe whose allocation torch refused (a RuntimeError of torch's words) give the memory reason, and a
    RuntimeError of another kind "your code raised RuntimeError"?"""
    check = registry.BY_ID[grade_id]
    with pytest.raises(RuntimeError) as refused:
        torch.empty(2 ** 50)  # 4 PB of float32
    assert one_check._probe_error(refused.value, check) == ["ran out of memory"]
    assert one_check._probe_error(MemoryError(), check) == ["ran out of memory"]
    assert one_check._probe_error(RuntimeError("shape mismatch"), check) == ["your code raised RuntimeError"]
