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


def _evaluations(variant: str, params: str, predictions: str, runs: str) -> dict[str, RunSpec]:
    """The dev and test evaluations of one trained model: ``<variant>_eval_<split>_<runs>``."""
    return {f"{variant}_eval_{split}_{runs}": RunSpec("evaluate", variant, reads=params, eval_corpus=corpus,
                                                      outputs=f"{predictions}.{split}.predictions")
            for split, corpus in (("dev", DEV), ("test", TEST_INPUTS))}


RUNS: dict[str, RunSpec] = {
    "vanilla_finetune_without_pretrain": RunSpec("finetune", "vanilla", writes="vanilla.model.params"),
    **_evaluations("vanilla", "vanilla.model.params", "vanilla.nopretrain", "without_pretrain"),
    "vanilla_pretrain": RunSpec("pretrain", "vanilla", writes="vanilla.pretrain.params"),
    "vanilla_finetune_with_pretrain": RunSpec(
        "finetune", "vanilla", reads="vanilla.pretrain.params", writes="vanilla.finetune.params"),
    **_evaluations("vanilla", "vanilla.finetune.params", "vanilla.pretrain", "with_pretrain"),
    "synthesizer_pretrain": RunSpec("pretrain", "synthesizer", writes="synthesizer.pretrain.params"),
    "synthesizer_finetune_with_pretrain": RunSpec(
        "finetune", "synthesizer", reads="synthesizer.pretrain.params", writes="synthesizer.finetune.params"),
    **_evaluations("synthesizer", "synthesizer.finetune.params", "synthesizer.pretrain", "with_pretrain"),
}
