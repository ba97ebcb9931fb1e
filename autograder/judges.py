"""Judges: decide each check from the raw outputs a probe sent back, in the grader's own process.

A judge gets the inputs the grader chose (its own copy) and the untrusted
output, and returns the problems it finds (empty: passed). It recomputes what
the output must be with trusted code (course_lib and the reference solutions)
and never believes a summary: every sample asked for must be there, each valid
for its own input. Messages say what is wrong without giving the answer away.
"""
from __future__ import annotations

import functools
import math

import torch

from course_lib import twin_checks
from course_lib.checks import span_sample_problems
from course_lib.datasets import CharCorruptionDatasetBase, NameDataset
from course_lib.layout import SOLUTIONS_DIR as SOLUTIONS
from course_lib.model import GPT, GPTConfig
from course_lib.notebook_loader import load_notebook, load_notebooks, notebook_paths

HANDOUT = dict(batch_size=256, learning_rate=6e-4, lr_decay=True, warmup_tokens=512 * 20, num_workers=4)
PRETRAIN_HANDOUT = dict(HANDOUT, max_epochs=650, batch_size=128, learning_rate=6e-3)


class Malformed(Exception):
    """The output does not have the form the probe returns: the submission's doing."""


@functools.lru_cache(maxsize=1)
def reference():
    """The graded parts as the instructor wrote them (trusted code, loaded in the grader only)."""
    return load_notebooks(notebook_paths(SOLUTIONS), module_name="judge_reference")


@functools.lru_cache(maxsize=4)
def given(notebook: str):
    """A solution notebook's own values (keys, values, X, ...): the twins are judged on these, not the sandbox's."""
    return load_notebook(SOLUTIONS / notebook, module_name=f"judge_given_{notebook[:2]}")


def _close(a, b, atol: float, rtol: float = 0.0) -> bool:
    return isinstance(a, torch.Tensor) and a.shape == b.shape and bool(
        torch.isfinite(a).all()) and torch.allclose(a.double(), b.double(), atol=atol, rtol=rtol)


# --- the glue: configs, datasets, params -----------------------------------------------------------

def _config_problems(fields, expected: dict, what: str) -> list[str]:
    if not isinstance(fields, dict) or all(v is None for v in fields.values()):
        return [f"{what} should return a TrainerConfig first"]
    wrong = []
    for name, want in expected.items():
        got = fields.get(name)
        if isinstance(want, bool) or isinstance(got, bool):
            ok = got is want
        elif isinstance(want, float):
            ok = isinstance(got, (int, float)) and math.isclose(got, want, rel_tol=1e-9)
        else:
            ok = isinstance(got, int) and got == want
        if not ok:
            wrong.append(name)
    return [f"{what}: these TrainerConfig fields differ from the handout: {', '.join(wrong)}"] if wrong else []


def _setup_problems(inputs: dict, output: dict, what: str, max_epochs: int) -> list[str]:
    documents = len(inputs["corpus"].split("\n"))
    expected = dict(HANDOUT, max_epochs=max_epochs, final_tokens=200 * documents * inputs["block_size"])
    problems = _config_problems(output.get("config"), expected, what)
    if not problems:  # the runs read the trainer's own config: it must say the same
        problems = _config_problems(output.get("trainer_config"), expected, f"{what} (the Trainer's config)")
    return problems or _dataset_problems(inputs, output.get("dataset"), what)


def _dataset_problems(inputs: dict, view, what: str) -> list[str]:
    """The trainer's dataset must be a NameDataset of the given file: same length, same items."""
    pretrain = CharCorruptionDatasetBase(inputs["corpus"], inputs["block_size"])
    want = NameDataset(pretrain, inputs["train_text"])
    if not isinstance(view, dict) or view.get("length") != len(want):
        return [f"{what} should train on a NameDataset of the file named by finetune_corpus_path"]
    items = view.get("items")
    if not isinstance(items, list) or len(items) != len(inputs["item_indices"]):
        return [f"{what}: the training examples did not come back complete"]
    for i, item in zip(inputs["item_indices"], items):
        x, y = want[i]
        if not (isinstance(item, list) and len(item) == 2 and all(isinstance(t, torch.Tensor) for t in item)
                and torch.equal(item[0], x) and torch.equal(item[1], y)):
            return [f"{what} should train on a NameDataset of the file named by finetune_corpus_path"]
    return []


def finetune_config(inputs: dict, output) -> list[str]:
    """Without params: the handout's config, a NameDataset of the file, and a plain GPT from the init."""
    if not isinstance(output, dict):
        raise Malformed("no dict")
    model = GPT(GPTConfig(CharCorruptionDatasetBase(inputs["corpus"], inputs["block_size"]).vocab_size,
                          inputs["block_size"], **inputs["model"]))
    model.load_state_dict(inputs["state"])
    model.eval()
    with torch.no_grad():
        want = model(inputs["idx"])[0]
    if not _close(output.get("logits"), want, atol=1e-4, rtol=1e-4):
        return ["initialize_vanilla_model should return the course's GPT built from the config it is given"]
    return _setup_problems(inputs, output, "finetune without pretraining", 75)


def finetune_pretrained(inputs: dict, output) -> list[str]:
    """With params: loaded into the model, 10 epochs, the rest as without; train() saves the params."""
    if not isinstance(output, dict):
        raise Malformed("no dict")
    problems = _setup_problems(inputs, output, "finetune after pretraining", 10)
    if problems:
        return problems
    after = output.get("state_after_finetune")
    expected = inputs["expected_state"]
    if not (isinstance(after, dict) and set(after) == set(expected)
            and all(_close(after[k], v, atol=0.0) for k, v in expected.items())):
        return ["finetune did not load the pretrained params into the model"]
    saved = output.get("saved")
    error = output.get("train_error")
    if saved is None and isinstance(error, str) and error.isidentifier():
        return [f"train() raised {error} on one step of the trainer finetune returned"]
    if not (isinstance(saved, dict) and set(saved) == set(expected)
            and all(isinstance(saved[k], torch.Tensor) and saved[k].shape == v.shape for k, v in expected.items())):
        return ["train() should save the model's params (its state_dict) to writing_params_path"]
    return []


def pretrain_config(inputs: dict, output) -> list[str]:
    if not isinstance(output, dict):
        raise Malformed("no dict")
    documents = inputs["corpus"].split("\n")
    expected = dict(PRETRAIN_HANDOUT, final_tokens=200 * len(documents) * inputs["block_size"])
    problems = _config_problems(output.get("config"), expected, "pretrain")
    if not problems:
        problems = _config_problems(output.get("trainer_config"), expected, "pretrain (the Trainer's config)")
    if not problems and output.get("documents") != documents:
        problems = ["pretrain should train on the pretraining dataset it is given"]
    return problems


# --- span corruption -------------------------------------------------------------------------------

def span_corruption(inputs: dict, output) -> list[str]:
    """Every sample asked for, each a valid corruption of its own document, and the right distributions."""
    if not isinstance(output, list) or len(output) != len(inputs["plans"]):
        return ["span corruption: the samples did not come back complete"]
    for plan, got in zip(inputs["plans"], output):
        if not isinstance(got, list) or len(got) != len(plan["draws"]):
            return ["span corruption: the samples did not come back complete"]
        samples = []
        for (idx, _), pair in zip(plan["draws"], got):
            if not (isinstance(pair, list) and len(pair) == 2 and all(isinstance(t, torch.Tensor) for t in pair)):
                return ["__getitem__ should return two tensors (x, y)"]
            x, y = pair
            if x.is_floating_point() or y.is_floating_point():
                return [f"x and y should be LongTensors (torch.long), got {x.dtype} and {y.dtype}"]
            samples.append({"idx": idx, "x": x.tolist() if x.dim() == 1 and not x.is_floating_point() else [0.5],
                            "y": y.tolist() if y.dim() == 1 and not y.is_floating_point() else [0.5],
                            "dtypes": [str(x.dtype), str(y.dtype)]})
        problems = span_sample_problems(samples, plan["block_size"], plan["corpus"])
        if problems:
            return [f"span corruption (block_size {plan['block_size']}): " + "; ".join(problems)]
    return []


# --- synthesizer attention -------------------------------------------------------------------------

def _synth_outputs(inputs: dict, output) -> list[list[torch.Tensor]]:
    if not isinstance(output, list) or len(output) != len(inputs["cases"]):
        raise Malformed("incomplete")
    for case, outs in zip(inputs["cases"], output):
        if not isinstance(outs, list) or len(outs) != len(case["inputs"]):
            raise Malformed("incomplete")
        for x, y in zip(case["inputs"], outs):
            if not isinstance(y, torch.Tensor) or tuple(y.shape) != tuple(x.shape):
                shape = tuple(y.shape) if isinstance(y, torch.Tensor) else type(y).__name__
                raise Malformed(f"forward should return a tensor shaped like its input {tuple(x.shape)}, got {shape}")
            if not bool(torch.isfinite(y).all()):
                raise Malformed("forward returned NaN or infinite values")
    return output


def _shape_message(err: Malformed) -> list[str]:
    text = str(err)
    return [text if text.startswith("forward") else "the synthesizer outputs did not come back complete"]


def synthesizer_public(inputs: dict, output) -> list[str]:
    """Shapes, causality, prefixes, and position 0 (which any causal attention gives as proj(value(x_0)))."""
    try:
        outs = _synth_outputs(inputs, output)
    except Malformed as err:
        return _shape_message(err)
    for case, ys in zip(inputs["cases"], outs):
        xs, state = case["inputs"], case["state"]
        for i in range(len(xs) - 1):
            x, x2 = xs[i], xs[i + 1]
            if x.shape == x2.shape and torch.equal(x[:, :-1], x2[:, :-1]) and not torch.equal(x, x2):
                if not torch.allclose(ys[i][:, :-1], ys[i + 1][:, :-1], atol=1e-5):
                    return ["changing the last position changed earlier outputs: the causal mask is missing or "
                            "misplaced"]
        for x, y in zip(xs, ys):
            longer = next((j for j, z in enumerate(xs) if z.size(1) > x.size(1) and z.size(0) == x.size(0)
                           and torch.equal(z[:, : x.size(1)], x)), None)
            if longer is not None and not torch.allclose(y, ys[longer][:, : x.size(1)], atol=1e-5):
                return ["a shorter sequence should give the same outputs on its positions"]
            first = (x[:, 0] @ state["value.weight"].T + state["value.bias"]) @ state["proj.weight"].T \
                + state["proj.bias"]
            if not torch.allclose(y[:, 0], first, atol=1e-4, rtol=1e-4):
                return ["the first position can only attend to itself, so its output should be the output projection "
                        "of its own value: check how values, heads and the projection are combined"]
    return []


def synthesizer_equivalence(inputs: dict, output) -> list[str]:
    """The same outputs as the reference layer with the same random weights, for several shapes."""
    try:
        outs = _synth_outputs(inputs, output)
    except Malformed as err:
        return _shape_message(err)
    ref_class = reference().SynthesizerAttention
    for case, ys in zip(inputs["cases"], outs):
        n_embd, n_head, block_size = case["dims"]
        ref = ref_class(GPTConfig(4, block_size, n_layer=1, n_head=n_head, n_embd=n_embd))
        ref.load_state_dict(case["state"])
        ref.eval()
        for x, y in zip(case["inputs"], ys):
            with torch.no_grad():
                want = ref(x)
            if (y.double() - want.double()).norm() >= case["tolerance"] * max(1.0, float(want.norm())):
                return [f"output differs from the expected attention for n_embd={n_embd}, n_head={n_head}, "
                        f"T={x.size(1)}"]
    return []


def synthesizer_model(inputs: dict, output) -> list[str]:
    ref = GPT(GPTConfig(**inputs["config"]), attention_class=reference().SynthesizerAttention)
    want = {k: list(v.shape) for k, v in ref.state_dict().items()}
    if not isinstance(output, dict) or output.get("shapes") != want:
        return ["initialize_synthesizer_model should return the course's GPT with your SynthesizerAttention in "
                "every block"]
    return []


# --- numeric twins (07, 08) ------------------------------------------------------------------------
# One check per twin, shared with the notebooks' test cells (course_lib.twin_checks); here it runs on the
# solution notebook's own given values and the raw values the submission sent back.

NB07, NB08 = "07_attention_exploration.ipynb", "08_position_embeddings.ipynb"


def _output(output) -> dict:
    return output if isinstance(output, dict) else {}


def _results(output, name: str, calls: list) -> list:
    got = _output(output).get(name)
    if not isinstance(got, list):
        return [RuntimeError(f"did not come back ({type(got).__name__})")] * len(calls)
    return got


def twin_07_a(inputs: dict, output) -> list[str]:
    g = given(NB07)
    return twin_checks.problems_07_a(_output(output).get("q_copy"), g.keys, g.values)


def twin_07_b(inputs: dict, output) -> list[str]:
    g, got = given(NB07), _output(output)
    return twin_checks.problems_07_b(got.get("M"), got.get("q_avg"), g.keys, g.values, g.basis_a, g.basis_b,
                                     seed=inputs["seed"])


def twin_07_c(inputs: dict, output) -> list[str]:
    g = given(NB07)
    return twin_checks.problems_07_c(_output(output).get("q_single"), g.means, g.values, g.a, g.b,
                                     seed=inputs["seed"])


def twin_07_d(inputs: dict, output) -> list[str]:
    g, got = given(NB07), _output(output)
    return twin_checks.problems_07_d(got.get("q_1"), got.get("q_2"), g.means, g.values, g.a, g.b,
                                     seed=inputs["seed"])


def twin_07_e(inputs: dict, output) -> list[str]:
    g, got = given(NB07), _output(output)
    return twin_checks.problems_07_e(got.get("c2_plain"), got.get("K"), got.get("Q"), got.get("V"), g.X, g.u_b,
                                     g.u_c)


def twin_08_a(inputs: dict, output) -> list[str]:
    g = given(NB08)
    calls = [tuple(c) for c in inputs["calls"]["permuted_output"]]
    return twin_checks.problems_08_a(_output(output).get("P"), _results(output, "permuted_output", calls), calls,
                                     g.params, g.T)


def twin_08_b(inputs: dict, output) -> list[str]:
    calls = [tuple(c) for c in inputs["calls"]["position_embeddings"]]
    return twin_checks.problems_08_b(calls, _results(output, "position_embeddings", calls))
