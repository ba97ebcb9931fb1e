"""The sandbox's answers on the wire: what a judge receives, whatever dtype a probe returned."""
from __future__ import annotations

import hypothesis.extra.numpy as hnp
import numpy as np
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from autograder.inside import wire

# the dtypes the wire carried as they were before uint8 travelled narrow; any other was widened to float64 in the
# sandbox, so a judge saw float64
CARRIED_BEFORE = {torch.float64, torch.float32, torch.float16, torch.bfloat16, torch.int64, torch.int32, torch.bool}
NUMPY_DTYPES = st.sampled_from([np.uint8, np.int8, np.int16, np.int32, np.int64, np.float16, np.float32, np.float64,
                                np.bool_])


def _judges_view_before(tensor: torch.Tensor) -> torch.Tensor:
    return tensor if tensor.dtype in CARRIED_BEFORE else tensor.double()


@settings(max_examples=200, deadline=None)
@given(hnp.arrays(NUMPY_DTYPES, hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=5),
                  elements={"allow_nan": False}), st.booleans())
def test_a_judge_sees_what_it_saw_before_uint8_travelled_narrow(array, as_bfloat16):
    """Whatever dtype and shape a probe's tensor has (uint8 among them), does the grader decode the same dtype and
    values a judge received when every uint8 was widened to float64 in the sandbox?"""
    tensor = torch.from_numpy(array.copy())
    if as_bfloat16 and tensor.is_floating_point():
        tensor = tensor.to(torch.bfloat16)
    got = wire.loads(wire.dumps({"out": tensor}))["out"]
    expected = _judges_view_before(tensor)
    assert got.dtype == expected.dtype and got.shape == expected.shape
    assert torch.equal(got, expected)


def test_uint8_ids_take_a_quarter_of_int32s_bytes():
    """Does a tensor of character ids sent as uint8 take about a quarter of the bytes it takes as int32?"""
    ids = torch.randint(0, 256, (3000, 150))
    narrow, wide = len(wire.dumps(ids.to(torch.uint8))), len(wire.dumps(ids.to(torch.int32)))
    assert narrow < 0.26 * wide
