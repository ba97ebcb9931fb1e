"""The named runs of the original run.sh: what each runs and which files it reads and writes.

No torch here: the grader's commands that only read files (which run files to collect, which nbgrader
cell holds a run's points) import this table, not ``course_lib.runs``, which imports torch.
"""
from __future__ import annotations

from dataclasses import dataclass

from course_lib.layout import DEV, TEST_INPUTS


@dataclass(frozen=True)
class RunSpec:
    """One line of the original run.sh."""

    function: str  # "pretrain", "finetune" or "evaluate"
    variant: str  # "vanilla" or "synthesizer"
    writes: str | None = None  # params file written (train runs)
    reads: str | None = None  # params file read (finetune after pretraining, evaluate)
    eval_corpus: str | None = None  # questions to answer (evaluate)
    outputs: str | None = None  # predictions file written (evaluate)


RUNS: dict[str, RunSpec] = {
    "vanilla_finetune_without_pretrain": RunSpec("finetune", "vanilla", writes="vanilla.model.params"),
    "vanilla_eval_dev_without_pretrain": RunSpec(
        "evaluate", "vanilla", reads="vanilla.model.params", eval_corpus=DEV,
        outputs="vanilla.nopretrain.dev.predictions"),
    "vanilla_eval_test_without_pretrain": RunSpec(
        "evaluate", "vanilla", reads="vanilla.model.params", eval_corpus=TEST_INPUTS,
        outputs="vanilla.nopretrain.test.predictions"),
    "vanilla_pretrain": RunSpec("pretrain", "vanilla", writes="vanilla.pretrain.params"),
    "vanilla_finetune_with_pretrain": RunSpec(
        "finetune", "vanilla", reads="vanilla.pretrain.params", writes="vanilla.finetune.params"),
    "vanilla_eval_dev_with_pretrain": RunSpec(
        "evaluate", "vanilla", reads="vanilla.finetune.params", eval_corpus=DEV,
        outputs="vanilla.pretrain.dev.predictions"),
    "vanilla_eval_test_with_pretrain": RunSpec(
        "evaluate", "vanilla", reads="vanilla.finetune.params", eval_corpus=TEST_INPUTS,
        outputs="vanilla.pretrain.test.predictions"),
    "synthesizer_pretrain": RunSpec("pretrain", "synthesizer", writes="synthesizer.pretrain.params"),
    "synthesizer_finetune_with_pretrain": RunSpec(
        "finetune", "synthesizer", reads="synthesizer.pretrain.params", writes="synthesizer.finetune.params"),
    "synthesizer_eval_dev_with_pretrain": RunSpec(
        "evaluate", "synthesizer", reads="synthesizer.finetune.params", eval_corpus=DEV,
        outputs="synthesizer.pretrain.dev.predictions"),
    "synthesizer_eval_test_with_pretrain": RunSpec(
        "evaluate", "synthesizer", reads="synthesizer.finetune.params", eval_corpus=TEST_INPUTS,
        outputs="synthesizer.pretrain.test.predictions"),
}
