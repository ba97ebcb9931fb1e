"""The public checks students run: an unwritten part is named, not a bare traceback."""
from __future__ import annotations

import pytest

from course_lib.attention import SynthesizerAttentionBase
from course_lib.checks import check_synthesizer_shapes


def test_unwritten_synthesizer_forward_is_named():
    """Does the public synthesizer check say forward is not written yet, naming where to write it?"""

    class SynthesizerAttention(SynthesizerAttentionBase):
        def forward(self, x):
            raise NotImplementedError()

    with pytest.raises(AssertionError, match="forward is not written yet.*notebook 05"):
        check_synthesizer_shapes(SynthesizerAttention)
