"""Jobs that run inside the sandbox on a submission's notebooks: ``python -m autograder.jobs JOB REQUEST ANSWER``."""
from __future__ import annotations

import json
import sys
import traceback

CHECKS = {  # check name -> (function path, graded names it takes)
    "finetune_config": ("course_lib.checks:check_finetune_config", ("initialize_vanilla_model", "finetune")),
    "finetune_after_pretraining": ("autograder.hidden_checks:check_finetune_after_pretraining",
                                   ("initialize_vanilla_model", "finetune", "train")),
    "pretrain_config": ("course_lib.checks:check_pretrain_config", ("pretrain",)),
    "span_corruption_public": ("course_lib.checks:check_span_corruption_basic", ("CharCorruptionDataset",)),
    "span_corruption_hidden": ("autograder.hidden_checks:check_span_corruption_hidden", ("CharCorruptionDataset",)),
    "synthesizer_public": ("course_lib.checks:check_synthesizer_shapes", ("SynthesizerAttention",)),
    "synthesizer_equivalence": ("autograder.hidden_checks:check_synthesizer_hidden", ("SynthesizerAttention",)),
}


def _load(request):
    from course_lib.notebook_loader import load_notebooks

    return load_notebooks(request["notebooks"], module_name="submission")


def checks(request: dict) -> dict:
    """Run each named check on the submission's graded parts: {name: [passed, message]}."""
    import importlib

    try:
        parts = _load(request)
    except Exception as err:  # report, do not crash: every check gets the reason
        return {name: [False, f"the notebooks could not be loaded: {err}"] for name in request["checks"]}
    results = {}
    for name in request["checks"]:
        path, needs = CHECKS[name]
        missing = [n for n in needs if not hasattr(parts, n)]
        if missing:
            results[name] = [False, f"not defined in the notebooks: {', '.join(missing)}"]
            continue
        module, func = path.split(":")
        try:
            getattr(importlib.import_module(module), func)(*(getattr(parts, n) for n in needs))
            results[name] = [True, "passed"]
        except NotImplementedError:
            results[name] = [False, "not written yet (NotImplementedError)"]
        except AssertionError as err:
            results[name] = [False, str(err) or "a check failed"]
        except Exception as err:
            results[name] = [False, f"{type(err).__name__}: {err}"]
    return results


def decode(request: dict) -> dict:
    """Answer the given questions with the submitted params and the student's own model code."""
    import torch

    from course_lib.checkpoint import load_params
    from course_lib.datasets import CharCorruptionDatasetBase
    from course_lib.evaluation import predict_places
    from course_lib.presets import get_preset
    from course_lib.runs import VARIANT_INIT, model_config

    torch.manual_seed(0)
    parts = _load(request)
    preset = get_preset(request["preset"])
    with open(request["wiki"], encoding="utf-8") as f:
        vocab_source = CharCorruptionDatasetBase(f.read(), preset.block_size)
    model = getattr(parts, VARIANT_INIT[request["variant"]])(model_config(preset, vocab_source.vocab_size))
    load_params(model, request["params"])
    return {"predictions": predict_places(model.cpu(), vocab_source.vocab, request["questions"])}


def main(argv: list[str]) -> int:
    job, request_path, answer_path = argv
    with open(request_path, encoding="utf-8") as f:
        request = json.load(f)
    try:
        answer = {"checks": checks, "decode": decode}[job](request)
    except Exception:
        traceback.print_exc()
        return 1
    with open(answer_path, "w", encoding="utf-8") as f:
        json.dump(answer, f)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
