"""The public checks the notebooks' test cells call; nothing here trains a model or reads a student's files.

One file per graded part: ``glue`` (02, 04), ``span`` (03), ``synth`` (05), ``twins`` (07, 08); ``public`` holds
the table of the public checks and the functions the test cells call, ``inputs`` the fresh inputs they draw,
``common`` what every judge shares. This module only re-exports the names the test cells import.
"""
from course_lib.checks.public import (
    check_finetune_config,
    check_pretrain_config,
    check_span_corruption_basic,
    check_synthesizer_model,
    check_synthesizer_shapes,
)
from course_lib.checks.twins import (
    assert_passes,
    problems_07_a,
    problems_07_b,
    problems_07_c,
    problems_07_d,
    problems_07_e,
)
from course_lib.checks.twins_positions import check_08_a, check_08_b

__all__ = [
    "assert_passes", "check_08_a", "check_08_b", "check_finetune_config", "check_pretrain_config",
    "check_span_corruption_basic", "check_synthesizer_model", "check_synthesizer_shapes", "problems_07_a",
    "problems_07_b", "problems_07_c", "problems_07_d", "problems_07_e",
]
