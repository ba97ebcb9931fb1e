"""Hidden checks, stronger than the public ones: called from the hidden test cells and by the grader.

Each check has two halves. A *probe* runs the student's code on inputs the
grader chose and returns what it produced (token ids, output tensors, config
values). A *judge* decides pass or fail from those outputs alone, against the
reference solutions. In a notebook both halves run in the student's kernel;
``python -m autograder grade`` runs the probe in the sandbox and the judge in
its own process, so a submission cannot report its own verdict.
Each failure message names what is wrong without giving the answer away.
"""
from __future__ import annotations

import functools
import tempfile
from pathlib import Path

import torch

from course_lib.check_failed import CheckFailed
from course_lib.checks import (
    TOY_CORPUS,
    finetune_problems,
    finetune_setup,
    sample_span_corruption,
    span_problems,
    synthesizer_config,
)
from course_lib.layout import SOLUTIONS_DIR as SOLUTIONS
from course_lib.notebook_loader import load_notebooks, notebook_paths

SPAN_BLOCK_SIZES = (24, 50, 128, 200)  # from 24 up, 7/8 of the block plus three masks fits
SYNTH_CONFIGS = ((6, 3, 8), (16, 4, 12), (32, 8, 20), (12, 1, 5))  # (n_embd, n_head, block_size)
CORPORA = {"toy": TOY_CORPUS, "long": "\n".join(line * 3 for line in TOY_CORPUS.split("\n"))}
FINETUNE_MODEL = dict(n_layer=1, n_head=2, n_embd=16)  # the toy model finetune_setup builds


@functools.lru_cache(maxsize=1)
def reference():
    if not SOLUTIONS.is_dir():  # inside the confined grading kernel: the reference is out of sight by design
        raise CheckFailed("this check compares with the reference solution, which only the course's grader "
                             "can see: its score comes from `python -m autograder grade`")
    return load_notebooks(notebook_paths(SOLUTIONS), module_name="hidden_reference")


# --- span corruption ---------------------------------------------------------------------------

def span_plan(samples: int = 600) -> list[dict]:
    """Every SPEC property over many samples, several block sizes, two seeds and two corpora."""
    return [dict(corpus=c, block_size=b, seed=s, samples=samples) for c in CORPORA for b in SPAN_BLOCK_SIZES
            for s in (1, 2)]


def span_reports(dataset_class, plan: list[dict]) -> list[dict]:
    return [sample_span_corruption(dataset_class, p["block_size"], p["samples"], p["seed"], CORPORA[p["corpus"]])
            for p in plan]


def span_hidden_problems(plan: list[dict], reports: list[dict]) -> list[str]:
    if len(reports) != len(plan):
        return ["span corruption: the samples did not come back complete"]
    for p, report in zip(plan, reports):
        problems = span_problems(report, p["block_size"], CORPORA[p["corpus"]])
        if problems:
            return [f"span corruption (block_size {p['block_size']}): " + "; ".join(problems)]
    return []


def check_span_corruption_hidden(dataset_class, samples: int = 600) -> None:
    plan = span_plan(samples)
    problems = span_hidden_problems(plan, span_reports(dataset_class, plan))
    if problems:
        raise CheckFailed(problems[0])


# --- synthesizer attention ---------------------------------------------------------------------

def _with_causality_probe(x: torch.Tensor) -> list[torch.Tensor]:
    """x, and x with its last position changed (earlier outputs must not move)."""
    if x.size(1) < 2:
        return [x]
    changed = x.clone()
    changed[:, -1] += 1.0
    return [x, changed]


def synthesizer_cases(seed: int = 0) -> list[dict]:
    """Random weights everywhere (not just initial ones) and inputs, for several shapes; plus the original's case."""
    generator = torch.Generator().manual_seed(seed)
    ref_class = reference().SynthesizerAttention
    cases = []
    for n_embd, n_head, block_size in SYNTH_CONFIGS:
        shapes = ref_class(synthesizer_config(n_embd, n_head, block_size)).state_dict()
        state = {k: torch.randn(v.shape, generator=generator) * 0.5 for k, v in shapes.items()}
        inputs = [t for T in sorted({1, block_size // 2, block_size - 1})
                  for t in _with_causality_probe(torch.randn(5, T, n_embd, generator=generator))]
        cases.append(dict(dims=[n_embd, n_head, block_size], state=state, inputs=inputs, tolerance=1e-4))
    # the original grader's case: initial weights of seed 0, n_embd 6, 3 heads, block 8, input (11, 7, 6)
    torch.manual_seed(0)
    state = ref_class(synthesizer_config(6, 3, 8)).state_dict()
    cases.append(dict(dims=[6, 3, 8], state=state, inputs=[torch.randn(11, 7, 6)], tolerance=1e-8))
    return cases


def public_synthesizer_cases() -> list[dict]:
    """The public check's shapes: causality and shorter sequences, with the student's own initial weights."""
    x = torch.randn(11, 7, 6, generator=torch.Generator().manual_seed(0))
    return [dict(dims=[6, 3, 8], state=None, inputs=[*_with_causality_probe(x), x[:, :3].clone()], tolerance=None)]


def synthesizer_outputs(attention_class, cases: list[dict]) -> dict:
    """The student's layer on each case's weights and inputs, in eval mode."""
    from course_lib.attention import SynthesizerAttentionBase

    outputs = []
    for case in cases:
        torch.manual_seed(0)
        layer = attention_class(synthesizer_config(*case["dims"]))
        if not isinstance(layer, SynthesizerAttentionBase):
            return {"subclass": False, "outputs": []}
        if case["state"] is not None:
            layer.load_state_dict(case["state"])
        layer.eval()
        with torch.no_grad():
            outputs.append([layer(x) for x in case["inputs"]])
    return {"subclass": True, "outputs": outputs}


def _shape_problem(got, x: torch.Tensor) -> str | None:
    if not isinstance(got, torch.Tensor) or tuple(got.shape) != tuple(x.shape):
        return f"forward should return a tensor shaped like its input {tuple(x.shape)}, got {tuple(getattr(got, 'shape', ()))}"
    return None


def synthesizer_problems(cases: list[dict], report: dict, against_reference: bool = True) -> list[str]:
    """Shapes and causality from the outputs; with ``against_reference`` also equality with the reference."""
    if not report.get("subclass"):
        return ["SynthesizerAttention must subclass SynthesizerAttentionBase"]
    if len(report.get("outputs", [])) != len(cases):
        return ["the synthesizer outputs did not come back complete"]
    ref_class = reference().SynthesizerAttention if against_reference else None
    for case, outputs in zip(cases, report["outputs"]):
        n_embd, n_head, _ = case["dims"]
        if len(outputs) != len(case["inputs"]):
            return ["the synthesizer outputs did not come back complete"]
        for x, got in zip(case["inputs"], outputs):
            problem = _shape_problem(got, x)
            if problem:
                return [problem]
        # causality: each probe pair differs only in its last position
        for i in range(len(outputs) - 1):
            x, x2 = case["inputs"][i], case["inputs"][i + 1]
            if x.shape == x2.shape and torch.equal(x[:, :-1], x2[:, :-1]) and not torch.equal(x, x2):
                if not torch.allclose(outputs[i][:, :-1], outputs[i + 1][:, :-1], atol=1e-5):
                    return ["changing the last position changed earlier outputs: the causal mask is missing or misplaced"]
        if not against_reference:
            first = case["inputs"][0]
            for x, got in zip(case["inputs"][1:], outputs[1:]):
                if x.size(1) < first.size(1) and torch.equal(x, first[:, :x.size(1)]) and \
                        not torch.allclose(got, outputs[0][:, :x.size(1)], atol=1e-6):
                    return ["a shorter sequence should give the same outputs on its positions"]
            continue
        ref = ref_class(synthesizer_config(*case["dims"]))
        ref.load_state_dict(case["state"])
        ref.eval()
        for x, got in zip(case["inputs"], outputs):
            with torch.no_grad():
                want = ref(x)
            if (got - want).norm() >= case["tolerance"] * max(1.0, float(want.norm())):
                return [f"output differs from the expected attention for n_embd={n_embd}, n_head={n_head}, "
                        f"T={x.size(1)}"]
    return []


def check_synthesizer_hidden(attention_class) -> None:
    cases = synthesizer_cases()
    problems = synthesizer_problems(cases, synthesizer_outputs(attention_class, cases))
    if problems:
        raise CheckFailed(problems[0])


# --- finetuning after pretraining --------------------------------------------------------------

def pretrained_params(path: str | Path, seed: int) -> list[float]:
    """Write random toy-model params to ``path``; returns their per-tensor sums to compare with."""
    from course_lib.checkpoint import save_params
    from course_lib.datasets import CharCorruptionDatasetBase
    from course_lib.model import GPT, GPTConfig

    torch.manual_seed(seed)
    model = GPT(GPTConfig(CharCorruptionDatasetBase(TOY_CORPUS, 128).vocab_size, 128, **FINETUNE_MODEL))
    save_params(model, path)
    return [float(t.double().sum()) for t in model.state_dict().values()]


def finetune_after_pretraining_report(initialize_vanilla_model, finetune, train, params: str, tmp_dir) -> dict:
    """What finetune does with a params path: the config, the model's params after the call, and train()'s file."""
    from course_lib.checkpoint import load_params

    report = finetune_setup(initialize_vanilla_model, finetune, str(params), tmp_dir)
    model, trainer = report.pop("model", None), report.pop("trainer", None)
    if model is None or trainer is None:
        return report
    report["param_sums"] = [float(t.double().sum()) for t in model.state_dict().values()]
    trainer.config.max_epochs, trainer.config.max_steps, trainer.config.progress = 1, 1, False
    trainer.config.num_workers = 0
    out = Path(tmp_dir) / "out.params"
    train(model, str(out), trainer)
    report["saved"] = out.is_file()
    if report["saved"]:
        try:
            load_params(model, out)
        except Exception:  # an unreadable file counts as not saved
            report["saved"] = False
    return report


def finetune_after_pretraining_problems(report: dict, expected_sums: list[float]) -> list[str]:
    problems = finetune_problems(report, pretrained=True)
    if problems:
        return problems
    sums = report.get("param_sums") or []
    if len(sums) != len(expected_sums) or any(abs(a - b) > 1e-6 * max(1.0, abs(b)) for a, b in zip(sums, expected_sums)):
        return ["finetune did not load the pretrained params into the model"]
    if not report.get("saved"):
        return ["train() should save the params to writing_params_path"]
    return []


def check_finetune_after_pretraining(initialize_vanilla_model, finetune, train) -> None:
    """With a params path: those params are loaded, 10 epochs, the rest as without; train() saves the params."""
    with tempfile.TemporaryDirectory() as tmp:
        expected = pretrained_params(Path(tmp) / "pre.params", seed=3)
        report = finetune_after_pretraining_report(initialize_vanilla_model, finetune, train,
                                                   str(Path(tmp) / "pre.params"), tmp)
    problems = finetune_after_pretraining_problems(report, expected)
    if problems:
        raise CheckFailed(problems[0])
