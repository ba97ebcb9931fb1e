"""How often does a right answer fail a check? Grade right answers on many grading seeds and count.

    python benchmarks/check_false_rejection.py                         # every sampling check, 1000 seeds each
    python benchmarks/check_false_rejection.py --checks 03-span-hidden --seeds 1000 --answers reference
    python benchmarks/check_false_rejection.py --answers all --seeds 200  # the valid variants too

Each check that samples (the span corruption checks draw the student's random
lengths and positions; the synthesizer checks draw dropout masks and random weights)
states in its docstring the probability that a right answer fails it, each <= 1e-9
(course_lib.checks.span.span_problems, course_lib.checks.synth.synthesizer_public_problems,
autograder.checks.hidden._dropout_problems). The glue checks compare with a tolerance
(02-glue-pretrained: train() against the judge's own trainer step), and the numeric
twins of 08 call the student's functions at drawn sizes: their verdict on a right
answer must not depend on the seed either. This benchmark measures it: the
reference solution, and with ``--answers all`` the right answers written other ways
that the tests of each graded part (tests/course_lib/checks: test_glue.py, test_span.py,
test_synth.py, test_twins.py) keep, are graded exactly as ``autograder grade`` grades them
(``autograder.grading.one_check``) on grading seeds 0..N-1, each seed drawing that
check's inputs afresh. It prints every failure (check, answer, seed, reason:
``--seed`` in the check's notebook cell replays it) and the time taken. With a bound
of 1e-9, N = 1000 seeds should show no failure; one failure means the bound is wrong.
"""
from __future__ import annotations

import argparse
import importlib.util
import random
import sys
import tempfile
import time
import types
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from autograder.checks import registry  # noqa: E402
from autograder.grading.one_check import grade_check  # noqa: E402
from course_lib.layout import SOLUTIONS_DIR  # noqa: E402
from course_lib.loader.load import load_notebooks, notebook_paths  # noqa: E402

# grade_id -> the part a variant replaces; the checks that sample something (the student's draws, dropout masks)
SAMPLING = {"03-span-public": "CharCorruptionDataset", "03-span-hidden": "CharCorruptionDataset",
            "05-synthesizer-public": "SynthesizerAttention", "05-synthesizer-equivalence": "SynthesizerAttention"}
# the glue checks: nothing sampled, but drawn worlds and a tolerance (a trainer step compared with the judge's)
GLUE = ("02-glue-config", "02-glue-pretrained", "04-pretrain-config", "05-synthesizer-model")
PART_TESTS = ROOT / "tests" / "course_lib" / "checks"  # each graded part's tests (test_glue.py ...): their answers
# The numeric twins that draw from the grading seed (session twins-07-08): 08 (a) calls permuted_output on fresh
# (P, X), 08 (b) calls position_embeddings at fresh sizes. The 07 twins sample nothing: their verdict does not
# depend on the seed (tests/course_lib/checks/test_twins.py::test_07_checks_sample_nothing), so there is nothing
# to measure. Their right answers in other forms come from that test file's families.
TWIN_SEEDED = ("08-a-test", "08-b-test", "08-b-hidden")


def twin_variants(grade_id: str) -> dict[str, dict]:
    """name -> the definitions a right answer of this twin replaces (test_twins.py's right answers)."""
    sys.path.insert(0, str(ROOT / "tests"))
    spec = importlib.util.spec_from_file_location("twin_variants", PART_TESTS / "test_twins.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    if grade_id == "08-a-test":
        out = {f"P {dtype}, {form}": {"P": module.SHIFT.to(dtype), "permuted_output": fn}
               for dtype in (torch.float32, torch.int64, torch.bool) for form, fn in module.PERMUTED_OUTPUTS.items()}
        for name, make in module.VALID_08_A.items():
            P, fn = make()
            out[name] = {"P": P, "permuted_output": fn}
        return out
    out = {f"{form}, {dtype}": {"position_embeddings": make(dtype)} for form, make in module.PHI_FORMS.items()
           for dtype in (torch.float32, torch.float64)}
    return {**out, **{name: {"position_embeddings": make()} for name, make in module.VALID_08_B.items()}}


def _part_tests(part: str):
    """The tests of a graded part (glue, span or synth) in tests/course_lib/checks, loaded once: the right answers
    written other ways they keep."""
    name = f"false_rejection_{part}"
    if name not in sys.modules:
        sys.path.insert(0, str(ROOT / "tests"))
        spec = importlib.util.spec_from_file_location(name, PART_TESTS / f"test_{part}.py")
        module = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]


def valid_variants() -> dict[str, dict[str, type]]:
    """part name -> {variant name: class}: the right answers the checks' own tests keep."""
    return {"CharCorruptionDataset": dict(_part_tests("span").SPAN_VALID),
            "SynthesizerAttention": dict(_part_tests("synth").SYNTH_VALID)}


def glue_variants(grade_id: str, reference) -> dict[str, dict]:
    """name -> the definitions a right glue answer replaces (test_glue.py's GLUE_VALID and PRETRAIN_VALID, and
    test_synth.py's valid inits of the synthesizer model)."""
    if grade_id.startswith("02"):
        return dict(_part_tests("glue").GLUE_VALID)
    if grade_id.startswith("04"):
        return dict(_part_tests("glue").PRETRAIN_VALID)
    valid = _part_tests("synth")._synth_model_valid(reference)
    return {name: {"initialize_synthesizer_model": init} for name, init in valid.items()}


def answers_for(grade_id: str, reference, which: str) -> dict[str, types.SimpleNamespace]:
    """name -> parts: the reference, and (``which == "all"``) each valid variant of the part the check grades."""
    base = {k: v for k, v in vars(reference).items() if not k.startswith("__")}
    out = {"reference": types.SimpleNamespace(**base)}
    if which != "all":
        return out
    if grade_id in TWIN_SEEDED:
        variants = twin_variants(grade_id)
    elif grade_id in GLUE:
        variants = glue_variants(grade_id, reference)
    else:
        part = SAMPLING[grade_id]
        variants = {name: {part: cls} for name, cls in valid_variants()[part].items()}
    for name, parts in variants.items():
        out[name] = types.SimpleNamespace(**{**base, **parts})
    return out


def inputs_for(grade_id: str, seed: int, folder: Path) -> dict:
    """The check's inputs of grading seed ``seed``, and the file they name written into ``folder``."""
    inputs = registry.BY_ID[grade_id].inputs(random.Random(seed))
    if "params_file" in inputs:
        torch.save(inputs["expected_state"], folder / inputs["params_file"])
    return inputs


def measure(grade_id: str, answers: dict, seeds: int, folder: Path) -> tuple[list[tuple[str, int, str]], float]:
    """(failures as (answer, seed, reason), seconds) of every answer on grading seeds 0..seeds-1."""
    check = registry.BY_ID[grade_id]
    failures = []
    started = time.perf_counter()
    for seed in range(seeds):
        inputs = inputs_for(grade_id, seed, folder)
        for name, parts in answers.items():
            problems = grade_check(check, parts, inputs, folder)
            if problems:
                failures.append((name, seed, problems[0][:200]))
                print(f"  FAILED {grade_id} {name} seed {seed}: {problems[0][:200]}", flush=True)
    return failures, time.perf_counter() - started


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--checks", default=",".join([*SAMPLING, *GLUE, *TWIN_SEEDED]),
                        help="comma-separated grade_ids")
    parser.add_argument("--seeds", type=int, default=1000, help="grading seeds per check (0..N-1)")
    parser.add_argument("--answers", choices=("reference", "all"), default="reference")
    args = parser.parse_args(argv)
    reference = load_notebooks(notebook_paths(SOLUTIONS_DIR), module_name="false_rejection_reference")
    total_failures = 0
    rows = []
    with tempfile.TemporaryDirectory(prefix="false-rejection-") as tmp:
        for grade_id in [c.strip() for c in args.checks.split(",") if c.strip()]:
            answers = answers_for(grade_id, reference, args.answers)
            print(f"{grade_id}: {len(answers)} answers x {args.seeds} grading seeds", flush=True)
            failures, seconds = measure(grade_id, answers, args.seeds, Path(tmp))
            total_failures += len(failures)
            rows.append((grade_id, len(answers), args.seeds, len(failures), seconds))
    print(f"\n{'check':<28}{'answers':>8}{'seeds':>7}{'gradings':>10}{'failed':>8}{'seconds':>9}{'s/grading':>10}")
    for grade_id, n_answers, seeds, failed, seconds in rows:
        gradings = n_answers * seeds
        print(f"{grade_id:<28}{n_answers:>8}{seeds:>7}{gradings:>10}{failed:>8}{seconds:>9.0f}"
              f"{seconds / gradings:>10.3f}")
    return 1 if total_failures else 0


if __name__ == "__main__":
    raise SystemExit(main())
