"""Jobs that run inside the sandbox on a submission: ``python -m autograder.jobs JOB REQUEST ANSWER``.

A job confines itself first (autograder.isolation), then loads the student's
notebooks and reports what their code *produced* on the grader's inputs.
It never reports a verdict: the grader judges the outputs in its own process.
"""
from __future__ import annotations

import json
import sys
import traceback

NEEDS = {  # check -> graded names it takes from the notebooks
    "finetune_config": ("initialize_vanilla_model", "finetune"),
    "finetune_after_pretraining": ("initialize_vanilla_model", "finetune", "train"),
    "pretrain_config": ("pretrain",),
    "span_corruption_public": ("CharCorruptionDataset",),
    "span_corruption_hidden": ("CharCorruptionDataset",),
    "synthesizer_public": ("SynthesizerAttention",),
    "synthesizer_equivalence": ("SynthesizerAttention",),
}


def _load(request):
    from course_lib.notebook_loader import load_notebooks

    return load_notebooks(request["notebooks"], module_name="submission")


def _plain(value):
    """Tensors to nested lists, recursively, so the report is JSON."""
    import torch

    if isinstance(value, torch.Tensor):
        return {"tensor": value.detach().cpu().double().tolist()}
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


def _probe(name: str, parts, request: dict, cases: dict, tmp: str):
    from course_lib import checks as public

    from . import hidden_checks as hidden

    if name == "finetune_config":
        report = public.finetune_setup(parts.initialize_vanilla_model, parts.finetune, None, tmp)
        report.pop("model", None), report.pop("trainer", None)
        return report
    if name == "finetune_after_pretraining":
        return hidden.finetune_after_pretraining_report(parts.initialize_vanilla_model, parts.finetune, parts.train,
                                                        request["pretrained_params"], tmp)
    if name == "pretrain_config":
        return public.pretrain_setup(parts.pretrain)
    if name == "span_corruption_public":
        p = request["span_public"]
        return public.sample_span_corruption(parts.CharCorruptionDataset, p["block_size"], p["samples"], p["seed"])
    if name == "span_corruption_hidden":
        return hidden.span_reports(parts.CharCorruptionDataset, request["span_hidden"])
    if name == "synthesizer_public":
        return hidden.synthesizer_outputs(parts.SynthesizerAttention, cases["synth_public"])
    if name == "synthesizer_equivalence":
        return hidden.synthesizer_outputs(parts.SynthesizerAttention, cases["synth"])
    raise KeyError(name)


def checks(request: dict) -> dict:
    """Each named check's raw report on the submission, or the error its code raised: {name: {report|error}}."""
    import tempfile

    import torch

    try:
        parts = _load(request)
    except Exception as err:  # report, do not crash: every check gets the reason
        return {name: {"error": f"the notebooks could not be loaded: {err}"} for name in request["checks"]}
    cases = torch.load(request["cases"], weights_only=True)
    results = {}
    for name in request["checks"]:
        missing = [n for n in NEEDS[name] if not hasattr(parts, n)]
        if missing:
            results[name] = {"error": f"not defined in the notebooks: {', '.join(missing)}"}
            continue
        try:
            with tempfile.TemporaryDirectory() as tmp:
                results[name] = {"report": _plain(_probe(name, parts, request, cases, tmp))}
        except NotImplementedError:
            results[name] = {"error": "not written yet (NotImplementedError)"}
        except Exception as err:
            results[name] = {"error": f"{type(err).__name__}: {err}"}
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
    from .isolation import confine, limit_resources

    job, request_path, answer_path = argv
    with open(request_path, encoding="utf-8") as f:
        request = json.load(f)
    limits = request.get("sandbox", {})
    limit_resources(limits.get("memory_mb"), limits.get("cpu_seconds"))
    status, _ = confine(hidden=limits.get("hidden", []), readable=limits.get("readable", []),
                        owned=limits.get("owned", []))
    print(f"sandbox: {status}", flush=True)
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
