"""The run parts by name: their runs, the files the grader reads for each, the cells of its points.

Names only, no torch: the steps that only read files (collect, similarity, the report, the feedback
pages) and the commands that start them import this, not the checks' registry, which imports torch.
"""
from __future__ import annotations

from dataclasses import dataclass

from course_lib.run_specs import RUNS


@dataclass(frozen=True)
class RunPart:
    """One training run's graded files, scored on the grader's own decoding of its params."""

    name: str  # e.g. "vanilla_pretrain" (bars.toml's key)
    params: str  # the params file evaluated
    dev: str  # the dev predictions file
    test: str  # the test predictions file
    attention: str  # "vanilla" or "synthesizer": which trusted layer decodes the params
    code_of: tuple[str, ...]  # notebooks (by number) whose code it runs; see registry.needs
    notebook: str  # notebook (no .ipynb) whose run cells hold its points in nbgrader's gradebook
    dev_run: str  # course_lib.runs name of the dev evaluation (what its run cell checks)
    test_run: str  # course_lib.runs name of the test evaluation

    def cell(self, split: str) -> str:
        """grade_id of the nbgrader cell that holds the points of one split ("dev" or "test"):
        "02-run-dev", ..."""
        return f"{self.notebook[:2]}-run-{split}"


def _run_part(name: str, train_run: str, dev_run: str, test_run: str, attention: str, code_of: tuple[str, ...],
              notebook: str) -> RunPart:
    return RunPart(name, RUNS[train_run].writes, RUNS[dev_run].outputs, RUNS[test_run].outputs, attention, code_of,
                   notebook, dev_run, test_run)


RUN_PARTS: tuple[RunPart, ...] = (
    _run_part("vanilla_nopretrain", "vanilla_finetune_without_pretrain", "vanilla_eval_dev_without_pretrain",
              "vanilla_eval_test_without_pretrain", "vanilla", ("02",), "02_finetune_without_pretraining"),
    _run_part("vanilla_pretrain", "vanilla_finetune_with_pretrain", "vanilla_eval_dev_with_pretrain",
              "vanilla_eval_test_with_pretrain", "vanilla", ("02", "03", "04"), "04_pretrain_then_finetune"),
    _run_part("synthesizer_pretrain", "synthesizer_finetune_with_pretrain", "synthesizer_eval_dev_with_pretrain",
              "synthesizer_eval_test_with_pretrain", "synthesizer", ("02", "03", "04", "05"), "05_synthesizer"),
)
RUN_FILES = tuple(sorted({n for p in RUN_PARTS for n in (p.params, p.dev, p.test)}))
# every named run's log: shown by the run cells while grading; the audit reads its seeds
RUN_LOGS = frozenset(f"{run}.json" for run in RUNS)
# "<run part>/<split>" (a PartResult's part) -> (notebook, grade_id) of the run cell with its points
RUN_CELLS = {f"{p.name}/{split}": (p.notebook, p.cell(split)) for p in RUN_PARTS for split in ("dev", "test")}
