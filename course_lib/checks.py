"""Public checks: the same code in the student's notebook and in the course's grader.

A check is three functions (``PublicCheck``): ``inputs(rng)`` chooses fresh inputs,
``probe(parts, inputs)`` runs the student's code on them and returns what came out,
raw, and ``judge(inputs, output)`` returns the problems it finds (empty: passed).
The notebook's public test cell runs all three in the student's kernel on inputs of
a fresh seed (printed in the failure, so ``seed=N`` replays it). The grader
(``autograder grade``, table ``autograder.checks.registry``) runs ``probe`` in its sandbox
and ``judge`` in its own process, on inputs of its own seed. A judge decides only
from properties any right answer has (the handout's values, shapes, causality, what
dropout does): nothing here computes a graded answer. Messages say what is wrong
without giving the answer away. The grader's hidden checks (in the grader, never shipped)
use the probes here too, with their own inputs and stronger judges.

The sampling judges state the probability that a right answer fails them (each
<= 1e-9): see ``span_problems``, ``synthesizer_public_problems`` and
benchmarks/check_false_rejection.py, which measures it.
"""
from __future__ import annotations

import dataclasses
import itertools
import math
import random
import tempfile
import types
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import torch
from torch import nn

from . import check_inputs as fresh
from .attention import SynthesizerAttentionBase
from .check_failed import CheckFailed
from .datasets import CharCorruptionDatasetBase, NameDataset
from .model import GPT, GPTConfig
from .not_written import unwritten
from .trainer import TrainerConfig
from .vocab import MASK_CHAR, PAD_CHAR

TRAINER_FIELDS = [f.name for f in dataclasses.fields(TrainerConfig)]
PLAIN = (bool, int, float, str, type(None))
HANDOUT = dict(batch_size=256, learning_rate=6e-4, lr_decay=True, warmup_tokens=512 * 20, num_workers=4)
PRETRAIN_HANDOUT = dict(HANDOUT, max_epochs=650, batch_size=128, learning_rate=6e-3)
DELTA = 1e-11  # false-rejection budget of one statistical event; a check has at most 90 of them (<= 1e-9)
TOLERANCE = dict(atol=1e-4, rtol=1e-4)  # float32 arithmetic in another order than the judge's


@dataclass(frozen=True)
class PublicCheck:
    """One public check: its nbgrader grade_id, the names it needs, and its three functions."""

    grade_id: str
    needs: tuple[str, ...]  # names the student's notebooks must define
    inputs: Callable[[random.Random], dict]  # fresh inputs for one run
    probe: Callable[[object, dict], object]  # (the student's parts, inputs) -> raw output
    judge: Callable[[dict, object], list[str]]  # (inputs, raw output) -> problems; empty: passed
    passed: str  # what the notebook prints when it passes ("subject: all public checks passed")
    unwritten: str = ""  # what is not written yet, when the student's code raises NotImplementedError


def plain(value):
    """An output as the grader's wire delivers it: tuples become lists, tensors are detached CPU copies."""
    if isinstance(value, torch.Tensor):
        return value.detach().cpu().clone()
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    return value if isinstance(value, PLAIN) else repr(value)[:200]


def sent(inputs):
    """What of a check's inputs its probe gets: every "expected..." entry (the judge's own copy of the answer) left
    out, at any depth, so the student's code never sees it."""
    if isinstance(inputs, dict):
        return {k: sent(v) for k, v in inputs.items() if not str(k).startswith("expected")}
    if isinstance(inputs, list):
        return [sent(v) for v in inputs]
    return inputs


def run_public(grade_id: str, parts, seed: int | None = None, replay: str = "") -> None:
    """The notebook's public test cell: fresh inputs, the student's code, the judge; CheckFailed naming the seed."""
    check = PUBLIC[grade_id]
    seed = random.SystemRandom().randrange(2 ** 31) if seed is None else seed
    inputs = check.inputs(random.Random(seed))
    try:
        output = check.probe(parts, sent(inputs))
    except NotImplementedError as err:
        what = unwritten(err)  # the function still holding the release's stub, if that is what raised
        detail = check.unwritten or (f"{what} is not written yet" if what else str(err)) or \
            f"write {' and '.join(check.needs)} in this notebook first"
        raise CheckFailed(f"{check.passed.split(':')[0]}: {detail}") from None
    problems = check.judge(inputs, plain(output))
    if problems:
        again = f"; `{replay.format(seed=seed)}` runs it again on the same inputs" if replay else ""
        raise CheckFailed("\n".join(problems) + f"\n(inputs of seed {seed}{again})")
    print(check.passed)


def _parts(**named) -> types.SimpleNamespace:
    """The student's definitions a check needs, as the grader's sandbox hands them to a probe."""
    return types.SimpleNamespace(**named)


# --- the glue: configs, datasets, params (02, 04) ---------------------------------------------------

def _fields(config) -> dict:
    """Every TrainerConfig field the object has, as plain values (absent ones as None)."""
    out = {}
    for name in TRAINER_FIELDS:
        value = getattr(config, name, None)
        out[name] = value if isinstance(value, PLAIN) else list(value) if isinstance(value, tuple) else repr(value)
    return out


def _pair(result, what: str) -> tuple:
    """(config, trainer) from a glue function's result; a clear error otherwise."""
    if not (isinstance(result, tuple) and len(result) == 2):
        raise TypeError(f"{what} should return (TrainerConfig, Trainer), got {type(result).__name__}")
    return result


def _dataset_view(dataset, indices: list[int]) -> dict:
    """Its length and the items at the given indices (None for an item that cannot be read: the judge says why)."""
    items = []
    for i in indices:
        try:
            items.append(list(dataset[i]))
        except Exception:  # e.g. a span-corruption dataset where a NameDataset belongs
            items.append(None)
    return {"length": len(dataset), "items": items}


def _toy_world(inputs: dict, folder: Path) -> tuple[CharCorruptionDatasetBase, str, GPTConfig]:
    corpus_dataset = CharCorruptionDatasetBase(inputs["corpus"], inputs["block_size"])
    path = folder / "toy_train.tsv"
    path.write_text(inputs["train_text"], encoding="utf-8")
    mconf = GPTConfig(corpus_dataset.vocab_size, inputs["block_size"], **inputs["model"])
    return corpus_dataset, str(path), mconf


def finetune_config_inputs(rng: random.Random) -> dict:
    world = fresh.toy_world(rng)
    model = fresh.toy_model(world)
    return {**world, "state": fresh.random_state(model, rng, scale=0.1), "item_indices": fresh.item_indices(rng, world),
            "idx": fresh.token_ids(rng, model.head.out_features, world["block_size"])}


def finetune_config_probe(parts, inputs: dict) -> dict:
    """finetune without params: what it returns, the trainer's dataset, and the model init's logits."""
    with tempfile.TemporaryDirectory(prefix="glue-") as tmp:
        corpus_dataset, train_path, mconf = _toy_world(inputs, Path(tmp))
        model = parts.initialize_vanilla_model(mconf)
        model.load_state_dict(inputs["state"])
        model.eval()
        with torch.no_grad():
            logits = model(inputs["idx"])[0]  # (2, T, vocab)
        config, trainer = _pair(parts.finetune(None, train_path, corpus_dataset, inputs["block_size"], model),
                                "finetune")
        return {"logits": logits, "config": _fields(config), "trainer_config": _fields(trainer.config),
                "dataset": _dataset_view(trainer.train_dataset, inputs["item_indices"])}


TOKEN_COUNTS = frozenset({"warmup_tokens", "final_tokens"})  # int fields a whole float may stand for


def config_problems(fields, expected: dict, what: str) -> list[str]:
    """The TrainerConfig fields that differ from ``expected`` (named, never their values)."""
    if not isinstance(fields, dict) or all(v is None for v in fields.values()):
        return [f"{what} should return a TrainerConfig first"]
    wrong = []
    for name, want in expected.items():
        got = fields.get(name)
        if isinstance(want, bool) or isinstance(got, bool):
            ok = got is want
        elif isinstance(want, float):
            ok = isinstance(got, (int, float)) and math.isclose(got, want, rel_tol=1e-9)
        elif name in TOKEN_COUNTS:  # the trainer only compares and divides by them: 512 * 20.0 trains the same
            ok = isinstance(got, (int, float)) and got == want
        else:
            ok = isinstance(got, int) and got == want
        if not ok:
            wrong.append(name)
    return [f"{what}: these TrainerConfig fields differ from the handout: {', '.join(wrong)}"] if wrong else []


def dataset_problems(inputs: dict, view, what: str) -> list[str]:
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


def setup_problems(inputs: dict, output: dict, what: str, max_epochs: int) -> list[str]:
    """The handout's finetuning config (in what finetune returns and in its Trainer) and its dataset."""
    documents = len(inputs["corpus"].split("\n"))
    expected = dict(HANDOUT, max_epochs=max_epochs, final_tokens=200 * documents * inputs["block_size"])
    problems = config_problems(output.get("config"), expected, what)
    if not problems:  # the runs read the trainer's own config: it must say the same
        problems = config_problems(output.get("trainer_config"), expected, f"{what} (the Trainer's config)")
    return problems or dataset_problems(inputs, output.get("dataset"), what)


def _close(a, b, atol: float, rtol: float = 0.0) -> bool:
    return isinstance(a, torch.Tensor) and a.shape == b.shape and bool(
        torch.isfinite(a).all()) and torch.allclose(a.double(), b.double(), atol=atol, rtol=rtol)


def finetune_config_problems(inputs: dict, output) -> list[str]:
    """Without params: the handout's config, a NameDataset of the file, and a plain GPT from the init."""
    if not isinstance(output, dict):
        return ["finetune's results did not come back"]
    model = fresh.toy_model(inputs)
    model.load_state_dict(inputs["state"])
    model.eval()
    with torch.no_grad():
        want = model(inputs["idx"])[0]
    if not _close(output.get("logits"), want, **TOLERANCE):
        return ["initialize_vanilla_model should return the course's GPT built from the config it is given"]
    return setup_problems(inputs, output, "finetune without pretraining", 75)


def finetune_pretrained_probe(parts, inputs: dict) -> dict:
    """finetune with a params path, then one step of train(): the params before and after, and the file saved."""
    with tempfile.TemporaryDirectory(prefix="glue-") as tmp:
        corpus_dataset, train_path, mconf = _toy_world(inputs, Path(tmp))
        model = parts.initialize_vanilla_model(mconf)
        config, trainer = _pair(parts.finetune(inputs["params_file"], train_path, corpus_dataset,
                                               inputs["block_size"], model), "finetune")
        out = {"config": _fields(config), "trainer_config": _fields(trainer.config),
               "state_after_finetune": {k: v.detach().clone() for k, v in model.state_dict().items()},
               "dataset": _dataset_view(trainer.train_dataset, inputs["item_indices"])}
        trainer.config.max_epochs, trainer.config.max_steps, trainer.config.num_workers = 1, 1, 0
        trainer.config.progress = False
        saved = Path(tmp) / "trained.params"
        torch.manual_seed(inputs.get("seed", 0))
        try:
            parts.train(model, str(saved), trainer)
        except Exception as err:  # judged after the config and dataset, which may say why it failed
            out["train_error"] = type(err).__name__
        out["state_after_train"] = {k: v.detach().clone() for k, v in model.state_dict().items()}
        out["saved"] = torch.load(saved, map_location="cpu", weights_only=True) if saved.is_file() else None
        return out


def pretrain_config_inputs(rng: random.Random) -> dict:
    return fresh.toy_world(rng)


def pretrain_config_probe(parts, inputs: dict) -> dict:
    """pretrain on a given dataset: what it returns and the documents its trainer trains on."""
    dataset = CharCorruptionDatasetBase(inputs["corpus"], inputs["block_size"])
    model = GPT(GPTConfig(dataset.vocab_size, inputs["block_size"], **inputs["model"]))
    config, trainer = _pair(parts.pretrain(dataset, inputs["block_size"], model), "pretrain")
    data = getattr(trainer.train_dataset, "data", None)
    return {"config": _fields(config), "trainer_config": _fields(trainer.config),
            "documents": list(data) if isinstance(data, list) else None}


def pretrain_config_problems(inputs: dict, output) -> list[str]:
    """The handout's pretraining config, in what pretrain returns and in its Trainer, on the dataset given."""
    if not isinstance(output, dict):
        return ["pretrain's results did not come back"]
    documents = inputs["corpus"].split("\n")
    expected = dict(PRETRAIN_HANDOUT, final_tokens=200 * len(documents) * inputs["block_size"])
    problems = config_problems(output.get("config"), expected, "pretrain")
    if not problems:
        problems = config_problems(output.get("trainer_config"), expected, "pretrain (the Trainer's config)")
    if not problems and output.get("documents") != documents:
        problems = ["pretrain should train on the pretraining dataset it is given"]
    return problems


# --- span corruption (03) ---------------------------------------------------------------------------

SPAN_PUBLIC = dict(block_sizes=(50,), samples=600)  # the public check: the handout's block of 50


def span_inputs(rng: random.Random, block_sizes=SPAN_PUBLIC["block_sizes"], samples=SPAN_PUBLIC["samples"]) -> dict:
    return {"plans": [fresh.span_plan(rng, b, samples if isinstance(samples, int) else samples[i])
                      for i, b in enumerate(block_sizes)]}


def _pack(samples: list) -> dict:
    """A plan's (x, y) pairs: stacked when they are all 1-D tensors of one shape and dtype (int64 ids as int32),
    else the raw pairs up to the first odd one (the answer is wrong then; the judge says how)."""
    pairs = [tuple(p) if isinstance(p, list) else p for p in samples]
    first = pairs[0] if pairs else None
    for n, pair in enumerate(pairs):
        ok = isinstance(pair, tuple) and len(pair) == 2 and all(isinstance(t, torch.Tensor) for t in pair)
        if not (ok and pair[0].dim() == 1 and pair[0].shape == pair[1].shape == first[0].shape
                and pair[0].dtype == pair[1].dtype == first[0].dtype):
            return {"samples": [list(p) if isinstance(p, tuple) else [p] for p in pairs[: n + 1]]}
    x = torch.stack([p[0] for p in pairs]).detach().cpu()  # (S, block_size - 1)
    y = torch.stack([p[1] for p in pairs]).detach().cpu()
    dtype = str(x.dtype)
    if x.dtype == torch.int64 and x.numel() and min(x.min(), y.min()) >= 0 and max(x.max(), y.max()) < 2 ** 31:
        x, y = x.to(torch.int32), y.to(torch.int32)  # the same ids, half the bytes on the wire
    return {"x": x, "y": y, "dtype": dtype}


def span_probe(parts, inputs: dict) -> list[dict]:
    """For each plan: the (x, y) the student's dataset gives for each drawn document, after seeding once."""
    out = []
    for plan in inputs["plans"]:
        dataset = parts.CharCorruptionDataset(plan["corpus"], plan["block_size"])
        random.seed(plan["seed"])
        torch.manual_seed(plan["seed"])
        out.append(_pack([dataset[idx] for idx in plan["draws"]]))
    return out


def _odd_sample(pair, block_size: int) -> str:
    """What is wrong with one raw (x, y) that could not be stacked with the others."""
    if not (isinstance(pair, list) and len(pair) == 2 and all(isinstance(t, torch.Tensor) for t in pair)):
        return "__getitem__ should return two tensors (x, y)"
    x, y = pair
    if x.is_floating_point() or y.is_floating_point() or x.dtype != y.dtype:
        return f"x and y should be LongTensors (torch.long), got {x.dtype} and {y.dtype}"
    return f"x and y should both have shape ({block_size - 1},), got {tuple(x.shape)} and {tuple(y.shape)}"


def _span_rows(plan: dict, got) -> tuple[list[list[int]], list[list[int]]] | str:
    """The plan's x and y rows as lists of ints, or what is wrong with their form."""
    block_size = plan["block_size"]
    if isinstance(got, dict) and isinstance(got.get("samples"), list) and got["samples"]:
        return _odd_sample(got["samples"][-1], block_size)
    x, y = (got.get("x"), got.get("y")) if isinstance(got, dict) else (None, None)
    if not (isinstance(x, torch.Tensor) and isinstance(y, torch.Tensor) and x.dim() == 2 and x.shape == y.shape
            and x.size(0) == len(plan["draws"])):
        return "the samples did not come back complete"
    if got.get("dtype") != "torch.int64":
        return f"x and y should be LongTensors (torch.long), got {got.get('dtype')}"
    if x.size(1) != block_size - 1:
        return f"x and y should both have shape ({block_size - 1},), got ({x.size(1)},)"
    return x.long().tolist(), y.long().tolist()


def extreme_slack(n: int, values: int, delta: float = DELTA) -> int | None:
    """How far from an end of ``values`` equally likely lengths the most extreme of ``n`` draws may stop
    (P <= delta that a uniform draw stops farther); None when ``n`` is too few to say anything."""
    for m in range(values // 2):
        if (1 - (m + 1) / values) ** n <= delta:
            return m
    return None


def mean_tolerance(kept: list[int], delta: float = DELTA) -> float:
    """The largest |mean(masked - L/4)| a right answer shows with probability >= 1 - delta (see span_problems)."""
    log = math.log(2 / delta)
    variance = sum(n * n for n in kept) / 16  # each draw's sd is at most L/4
    reach = max(kept) * log / 3  # each centred draw lies within +-L of its mean
    return 1.5 + (reach + math.sqrt(reach * reach + 2 * variance * log)) / len(kept)


def span_problems(inputs: dict, output) -> list[str]:
    """What the samples break of span corruption (empty: none), every sample checked against its own document.

    Deterministic, per sample: LongTensors of shape (block_size - 1,), ids of the
    vocabulary, y = x shifted by one, padding only at the end, exactly
    ``prefix⁇suffix⁇masked⁇`` (the final mask included), prefix + masked + suffix
    the start of the document, 4 <= L <= u = int(block_size * 7/8) (L = the whole
    document when it is shorter than 4).

    Statistical, each at most DELTA = 1e-11 to fail a right answer (a check has
    at most 2 per plan + 2 events: <= 1e-9 for up to 40 plans):
    - truncation (per plan): over the n draws on documents longer than u, the
      shortest kept length must be <= 4 + m and the longest >= u - m, where m is
      the least with (1 - (m + 1)/(u - 3))^n <= DELTA (``extreme_slack``): for a
      uniform L over the u - 3 lengths, each end is missed with probability
      (1 - (m + 1)/(u - 3))^n. A cap below u is caught once m = 0, as it is at
      the smaller blocks.
    - masked length mean (all plans pooled): o_i = masked_i - L_i/4. A right answer
      has |E[o_i | L_i]| <= 1.5 (SPEC's band) and, as every right answer the course
      knows (uniform on 1..L/2, Gaussian of sd L/8), sd <= L_i/4; the centred o_i
      lie within +-L_i <= R. Bernstein's inequality gives P(|sum(o_i - E o_i)| >= t)
      <= 2 exp(-t^2 / (2 (V + R t / 3))), V = sum(L_i^2)/16; ``mean_tolerance`` is
      1.5 + t/n for the t at which that is DELTA.
    - masked length random (all plans pooled): draws of the same L >= 12 are paired;
      when there are k >= 37 pairs, some pair must differ. A right answer that gives
      no masked length more than probability 1/2 fails with probability <= 2^-k <= DELTA.
    """
    if not isinstance(output, list) or len(output) != len(inputs["plans"]):
        return ["span corruption: the samples did not come back complete"]
    pooled = {"kept": [], "offsets": [], "by_kept": {}}
    for plan, got in zip(inputs["plans"], output):
        rows = _span_rows(plan, got)
        if isinstance(rows, str):
            return [f"span corruption (block_size {plan['block_size']}): {rows}"]
        problems = _plan_problems(plan, *rows, pooled)
        if problems:
            return [f"span corruption (block_size {plan['block_size']}): " + "; ".join(problems)]
    return _masked_problems(pooled)


def _plan_problems(plan: dict, xs: list[list[int]], ys: list[list[int]], pooled: dict) -> list[str]:
    """The deterministic properties of every sample of one plan, and its truncation's reach."""
    block_size = plan["block_size"]
    vocab = CharCorruptionDatasetBase(plan["corpus"], block_size).vocab
    itos = [vocab.itos[i] for i in range(len(vocab))]
    documents = plan["corpus"].split("\n")
    upper = fresh.kept_cap(block_size)
    long_kept = []
    problems: list[str] = []

    def fail(message: str) -> None:
        if message not in problems:
            problems.append(message)

    for idx, x, y in zip(plan["draws"], xs, ys):
        if max(x + y) >= len(itos):
            return ["x and y should hold indices of the dataset's vocabulary (stoi)"]
        if x[1:] != y[:-1]:
            fail("y should be x shifted left by one character (x[1:] == y[:-1])")
        body = ("".join(map(itos.__getitem__, x)) + itos[y[-1]]).rstrip(PAD_CHAR)
        if PAD_CHAR in body:
            fail("padding should appear only at the end of an example")
        parts = body.split(MASK_CHAR)
        if len(parts) != 4 or parts[3] != "":
            fail(f"an example should look like prefix{MASK_CHAR}suffix{MASK_CHAR}masked{MASK_CHAR} then padding")
            continue
        prefix, suffix, masked = parts[:3]
        kept = len(prefix) + len(masked) + len(suffix)
        if not documents[idx].startswith(prefix + masked + suffix):
            fail("prefix + masked + suffix should be the start of the document, in order")
        if not min(4, len(documents[idx])) <= kept <= upper:  # a document shorter than 4 is kept whole
            fail(f"the truncated document should keep between 4 and int(block_size * 7/8) = {upper} characters, "
                 f"kept {kept}")
        if len(documents[idx]) >= upper:
            long_kept.append(kept)
        pooled["kept"].append(kept)
        pooled["offsets"].append(len(masked) - kept / 4)
        pooled["by_kept"].setdefault(kept, []).append(len(masked))
    return problems or _truncation_problems(long_kept, upper)


def _truncation_problems(kept: list[int], upper: int) -> list[str]:
    """Both ends of 4..upper reached, to the resolution the number of draws allows (see span_problems)."""
    slack = extreme_slack(len(kept), upper - 3)
    if slack is None:
        return []
    shortest, longest = min(kept), max(kept)
    if longest < upper - slack or shortest > 4 + slack:
        return [f"the truncation length should be random, every length from 4 to int(block_size * 7/8) = {upper} "
                f"possible: over {len(kept)} examples of documents longer than that, the kept lengths ran from "
                f"{shortest} to {longest}"]
    return []


def _masked_problems(pooled: dict) -> list[str]:
    """The masked span's length: a quarter of L on average, and random (see span_problems)."""
    problems = []
    offsets = pooled["offsets"]
    if offsets:
        mean = sum(offsets) / len(offsets)
        if abs(mean) > mean_tolerance(pooled["kept"]):
            problems.append(f"span corruption: the masked span should be a quarter of the kept text on average "
                            f"(off by {mean:+.1f} characters over {len(offsets)} examples)")
    pairs = [(a, b) for kept, masked in pooled["by_kept"].items() if kept >= 12
             for a, b in zip(masked[0::2], masked[1::2])]
    if len(pairs) >= 37 and all(a == b for a, b in pairs):
        problems.append("span corruption: the masked span's length should be random")
    return problems


# --- synthesizer attention (05) ---------------------------------------------------------------------

SYNTH_PUBLIC_DIMS = (6, 3, 8)  # (n_embd, n_head, block_size) of the original grader's check
DROPOUT_BATCH = 16  # rows of the attention-dropout case: 16 rows x 3 heads, every head-row kept or dropped


def load_handout_params(layer: nn.Module, state: dict) -> list[str]:
    """Load the handout's parameters into a student's layer, ignoring its own extra buffers (a persistent
    mask, say); returns the names the layer has no place for."""
    _, unexpected = layer.load_state_dict(state, strict=False)
    return sorted(unexpected)


def synthesizer_public_inputs(rng: random.Random) -> dict:
    """Random handout weights; inputs for shapes and causality (eval) and for dropout (train, known seeds)."""
    dims = SYNTH_PUBLIC_DIMS
    n_embd, _, block_size = dims
    generator = torch.Generator().manual_seed(rng.randrange(2 ** 62))
    return {"cases": [
        {"dims": list(dims), "state": fresh.handout_state(rng, dims),
         "inputs": fresh.sequence_inputs(rng, n_embd, block_size)},
        {"dims": list(dims), "state": fresh.handout_state(rng, dims), "train": True, "attn_pdrop": 0.5,
         "resid_pdrop": 0.0, "seed": rng.randrange(2 ** 31),
         "inputs": [torch.randn(DROPOUT_BATCH, block_size - 1, n_embd, generator=generator)]},
        {"dims": list(dims), "state": fresh.handout_state(rng, dims), "train": True, "attn_pdrop": 0.0,
         "resid_pdrop": 0.5, "seed": rng.randrange(2 ** 31),
         "inputs": [torch.randn(4, block_size - 1, n_embd, generator=generator)]},
    ]}


def synthesizer_probe(parts, inputs: dict) -> list[dict]:
    """The student's layer with the given weights on the given inputs: in eval mode, or in train mode after
    seeding (then also in eval mode on the same inputs)."""
    results = []
    for case in inputs["cases"]:
        config = fresh.synthesizer_config(*case["dims"], attn_pdrop=case.get("attn_pdrop", 0.1),
                                          resid_pdrop=case.get("resid_pdrop", 0.1))
        layer = parts.SynthesizerAttention(config)
        result = {"subclass": isinstance(layer, SynthesizerAttentionBase),
                  "unloaded": load_handout_params(layer, case["state"])}
        torch.manual_seed(case.get("seed", 0))
        layer.train(bool(case.get("train")))
        with torch.no_grad():
            result["outputs"] = [layer(x) for x in case["inputs"]]
            if case.get("train"):
                layer.eval()
                result["eval"] = [layer(x) for x in case["inputs"]]
        results.append(result)
    return results


class _Malformed(Exception):
    """The outputs do not have the form the probe returns: the submission's doing."""


def synthesizer_outputs(inputs: dict, output) -> list[dict]:
    """The probe's results with every output checked for shape and finiteness; _Malformed says what is off."""
    if not isinstance(output, list) or len(output) != len(inputs["cases"]):
        raise _Malformed("the synthesizer outputs did not come back complete")
    for case, result in zip(inputs["cases"], output):
        if not isinstance(result, dict) or result.get("subclass") is not True:
            raise _Malformed("SynthesizerAttention must subclass SynthesizerAttentionBase")
        if result.get("unloaded"):
            raise _Malformed("SynthesizerAttention should keep the given parameters (w1, w2, b2, value, proj) "
                             "under their given names")
        for key in ("outputs", "eval") if case.get("train") else ("outputs",):
            outs = result.get(key)
            if not isinstance(outs, list) or len(outs) != len(case["inputs"]):
                raise _Malformed("the synthesizer outputs did not come back complete")
            for x, y in zip(case["inputs"], outs):
                if not isinstance(y, torch.Tensor) or tuple(y.shape) != tuple(x.shape):
                    shape = tuple(y.shape) if isinstance(y, torch.Tensor) else type(y).__name__
                    raise _Malformed(f"forward should return a tensor shaped like its input {tuple(x.shape)}, "
                                     f"got {shape}")
                if not bool(torch.isfinite(y).all()):
                    raise _Malformed("in training, forward returned NaN or infinite values: attention dropout "
                                     "should act on the attention weights (after the softmax), as in vanilla "
                                     "attention" if case.get("train") and key == "outputs"
                                     else "forward returned NaN or infinite values")
    return output


def _linear(x: torch.Tensor, state: dict, name: str) -> torch.Tensor:
    return x.double() @ state[f"{name}.weight"].double().T + state[f"{name}.bias"].double()


def _causal_problems(xs: list[torch.Tensor], ys: list[torch.Tensor], state: dict) -> list[str]:
    """Eval mode: earlier outputs ignore later inputs, prefixes agree, and position 0 is proj(value(x_0))."""
    for i in range(len(xs) - 1):
        x, x2 = xs[i], xs[i + 1]
        if x.shape == x2.shape and torch.equal(x[:, :-1], x2[:, :-1]) and not torch.equal(x, x2):
            if not torch.allclose(ys[i][:, :-1], ys[i + 1][:, :-1], atol=1e-5):
                return ["changing the last position changed earlier outputs: the causal mask is missing or misplaced"]
    for x, y in zip(xs, ys):
        longer = next((j for j, z in enumerate(xs) if z.size(1) > x.size(1) and z.size(0) == x.size(0)
                       and torch.equal(z[:, : x.size(1)], x)), None)
        if longer is not None and not torch.allclose(y, ys[longer][:, : x.size(1)], atol=1e-5):
            return ["a shorter sequence should give the same outputs on its positions"]
        first = _linear(_linear(x[:, 0], state, "value"), state, "proj")  # (B, C)
        if not torch.allclose(y[:, 0].double(), first, **TOLERANCE):
            return ["the first position can only attend to itself, so its output should be the output projection "
                    "of its own value: check how values, heads and the projection are combined"]
    return []


def _first_position_candidates(x: torch.Tensor, state: dict, n_head: int, p: float) -> torch.Tensor:
    """(B, 2^nh, C): position 0's output for every choice of heads whose one attention weight dropout zeroed."""
    value = _linear(x[:, 0], state, "value")  # (B, C)
    hs = value.size(1) // n_head
    kept = torch.tensor(list(itertools.product((0.0, 1.0), repeat=n_head)), dtype=torch.float64)  # (2^nh, nh)
    scale = kept.repeat_interleave(hs, dim=1) / (1 - p)  # (2^nh, C)
    return _linear(value[:, None, :] * scale, state, "proj")  # (B, 2^nh, C)


def _attention_dropout_problems(case: dict, y: torch.Tensor) -> list[str]:
    """Train mode, attention dropout p only: at position 0 each head's single weight is 0 or 1/(1-p), and both
    happen. A right answer shows no drop (or no keep) in 16 rows x 3 heads with probability 2 * 0.5^48."""
    n_head, p = case["dims"][1], case["attn_pdrop"]
    candidates = _first_position_candidates(case["inputs"][0], case["state"], n_head, p)  # (B, 2^nh, C)
    got = y[:, 0].double()[:, None, :]  # (B, 1, C)
    close = ((got - candidates).abs() <= TOLERANCE["atol"] + TOLERANCE["rtol"] * candidates.abs()).all(-1)
    if not bool(close.any(-1).all()):
        return ["in training, attention dropout should zero attention weights and scale the rest by "
                "1/(1 - attn_pdrop), as in vanilla attention: apply self.attn_drop to the attention weights"]
    choice = close.float().argmax(-1)  # (B,) the first matching combination of kept heads
    kept = torch.tensor(list(itertools.product((0, 1), repeat=n_head)))[choice]  # (B, nh)
    if bool(kept.all()) or not bool(kept.any()):
        return ["in training, attention dropout should drop attention weights at random (rate attn_pdrop): "
                "apply self.attn_drop to the attention weights"]
    return []


def _residual_dropout_problems(case: dict, y: torch.Tensor, y_eval: torch.Tensor) -> list[str]:
    """Train mode, residual dropout p only: each output element is 0 or its eval value / (1-p), and both happen.
    A right answer drops none (or all) of its 4 x 7 x 6 elements with probability 2 * 0.5^168."""
    p = case["resid_pdrop"]
    scaled = y_eval.double() / (1 - p)
    ok = (y.double() == 0) | torch.isclose(y.double(), scaled, **TOLERANCE)
    zeros = (y == 0) & (y_eval != 0)
    if not bool(ok.all()) or not bool(zeros.any()) or bool(zeros.all()):
        return ["in training, the output should go through self.resid_drop after the projection, as in vanilla "
                "attention"]
    return []


def synthesizer_public_problems(inputs: dict, output) -> list[str]:
    """Shapes, causality, prefixes, position 0 (proj(value(x_0)) in any causal attention), and what dropout does
    in training (probability <= 4e-15 that a right answer fails: see the two dropout helpers)."""
    try:
        results = synthesizer_outputs(inputs, output)
    except _Malformed as err:
        return [str(err)]
    for case, result in zip(inputs["cases"], results):
        if not case.get("train"):
            problems = _causal_problems(case["inputs"], result["outputs"], case["state"])
        elif case["attn_pdrop"] > 0:
            problems = _attention_dropout_problems(case, result["outputs"][0])
        else:
            problems = _residual_dropout_problems(case, result["outputs"][0], result["eval"][0])
        if problems:
            return problems
    return []


# --- the synthesizer model (05) ---------------------------------------------------------------------

def synthesizer_model_inputs(rng: random.Random) -> dict:
    """A fresh config (two layers or more, dropouts of their own) and random handout weights for its layers."""
    # with one layer, "the synthesizer in the first block only" would be the right model
    n_head = rng.choice((1, 2, 4))
    drops = rng.sample((0.0, 0.05, 0.1, 0.2, 0.3), 3)
    config = dict(vocab_size=rng.randint(5, 40), block_size=rng.randint(6, 24), n_layer=rng.randint(2, 3),
                  n_head=n_head, n_embd=n_head * rng.choice((2, 4, 8)), embd_pdrop=drops[0], resid_pdrop=drops[1],
                  attn_pdrop=drops[2])
    dims = (config["n_embd"], n_head, config["block_size"])
    generator = torch.Generator().manual_seed(rng.randrange(2 ** 62))
    return {"config": config, "state": fresh.handout_state(rng, dims),
            "x": torch.randn(2, config["block_size"] - 1, config["n_embd"], generator=generator)}


def synthesizer_model_probe(parts, inputs: dict) -> dict:
    """The model's parameter shapes and dropout rates, and each block's attention against a fresh layer of the
    student's own SynthesizerAttention, both given the same weights."""
    config = GPTConfig(**inputs["config"])
    model = parts.initialize_synthesizer_model(config)
    if not isinstance(model, GPT):
        return {"gpt": False}
    out = {"gpt": True, "shapes": {k: list(v.shape) for k, v in model.named_parameters()},
           "dropouts": [m.p for m in model.modules() if isinstance(m, nn.Dropout)], "blocks": []}
    for block in model.blocks:
        own = parts.SynthesizerAttention(config)
        try:  # a block of another shape cannot take these weights: the shapes already say what is wrong
            for layer in (block.attn, own):
                layer.load_state_dict(inputs["state"], strict=False)
                layer.eval()
            with torch.no_grad():
                out["blocks"].append([block.attn(inputs["x"]), own(inputs["x"])])
        except (RuntimeError, TypeError, AttributeError):
            out["blocks"].append(None)
    return out


def synthesizer_model_problems(inputs: dict, output) -> list[str]:
    """The course's GPT of the given config with the student's SynthesizerAttention in every block."""
    wrong = ["initialize_synthesizer_model should return the course's GPT, built from the config it is given, "
             "with your SynthesizerAttention in every block"]
    config = GPTConfig(**inputs["config"])
    want = GPT(config, attention_class=SynthesizerAttentionBase)
    if not isinstance(output, dict) or output.get("gpt") is not True:
        return wrong
    if output.get("shapes") != {k: list(v.shape) for k, v in want.named_parameters()}:
        return wrong
    if output.get("dropouts") != [m.p for m in want.modules() if isinstance(m, nn.Dropout)]:
        return ["initialize_synthesizer_model should build the model from the config it is given (its dropout "
                "rates differ)"]
    blocks = output.get("blocks")
    if not (isinstance(blocks, list) and len(blocks) == config.n_layer):
        return wrong
    for pair in blocks:
        if not (isinstance(pair, list) and len(pair) == 2 and _close(pair[0], pair[1], atol=1e-6)
                and isinstance(pair[1], torch.Tensor) and pair[1].shape == inputs["x"].shape):
            return wrong
    return []


# --- the table, and the functions the notebooks' test cells call ------------------------------------

PUBLIC: dict[str, PublicCheck] = {c.grade_id: c for c in (
    PublicCheck("02-glue-config", ("initialize_vanilla_model", "finetune"), finetune_config_inputs,
                finetune_config_probe, finetune_config_problems, "finetune (without pretraining): all public checks passed",
                "initialize_vanilla_model and finetune are not written yet (this notebook's glue cell)"),
    PublicCheck("03-span-public", ("CharCorruptionDataset",), span_inputs, span_probe, span_problems,
                "span corruption: all public checks passed",
                "__getitem__ is not written yet (CharCorruptionDataset, in this notebook's span corruption cell)"),
    PublicCheck("04-pretrain-config", ("pretrain",), pretrain_config_inputs, pretrain_config_probe,
                pretrain_config_problems, "pretrain: all public checks passed",
                "pretrain is not written yet (this notebook's glue cell)"),
    PublicCheck("05-synthesizer-public", ("SynthesizerAttention",), synthesizer_public_inputs, synthesizer_probe,
                synthesizer_public_problems, "synthesizer: all public checks passed",
                "SynthesizerAttention.forward is not written yet: write it in notebook 05's synthesizer cell (the "
                "one with `class SynthesizerAttention`)"),
    PublicCheck("05-synthesizer-model", ("SynthesizerAttention", "initialize_synthesizer_model"),
                synthesizer_model_inputs, synthesizer_model_probe, synthesizer_model_problems,
                "synthesizer model: all public checks passed"),
)}


def check_finetune_config(initialize_vanilla_model, finetune, seed: int | None = None) -> None:
    run_public("02-glue-config", _parts(initialize_vanilla_model=initialize_vanilla_model, finetune=finetune), seed,
               "check_finetune_config(initialize_vanilla_model, finetune, seed={seed})")


def check_span_corruption_basic(dataset_class, seed: int | None = None) -> None:
    if not issubclass(dataset_class, CharCorruptionDatasetBase):
        raise CheckFailed("CharCorruptionDataset must subclass CharCorruptionDatasetBase")
    run_public("03-span-public", _parts(CharCorruptionDataset=dataset_class), seed,
               "check_span_corruption_basic(CharCorruptionDataset, seed={seed})")


def check_pretrain_config(pretrain, seed: int | None = None) -> None:
    run_public("04-pretrain-config", _parts(pretrain=pretrain), seed, "check_pretrain_config(pretrain, seed={seed})")


def check_synthesizer_shapes(attention_class, seed: int | None = None) -> None:
    run_public("05-synthesizer-public", _parts(SynthesizerAttention=attention_class), seed,
               "check_synthesizer_shapes(SynthesizerAttention, seed={seed})")


def check_synthesizer_model(initialize_synthesizer_model, attention_class, seed: int | None = None) -> None:
    run_public("05-synthesizer-model", _parts(initialize_synthesizer_model=initialize_synthesizer_model,
                                              SynthesizerAttention=attention_class), seed,
               "check_synthesizer_model(initialize_synthesizer_model, SynthesizerAttention, seed={seed})")


# --- for the course's own tests: judge a dataset class on one corpus --------------------------------

TOY_CORPUS = "\n".join(
    [
        "Ada Quill. Ada Quill was born in Marlow and later taught mathematics in Tessary for many years .",
        "Bo Renn. Born in Ostheim, Renn trained as a carpenter before moving to Calder to build bridges .",
        "Cyd Vane. Cyd Vane (born 1901 in Pellow - died 1970 in Ardent) was a poet and a printer .",
        "Dara Moss. A native of Lunet, Dara Moss studied botany in Fennick and wrote about mosses .",
        "Eli Stroud. Eli Stroud is an engineer who was born in Carrow and now lives in Wexley .",
        "Fay Orr. Where was Fay Orr born? In Tillby, though she grew up by the sea near Harlow .",
    ]
)


def span_corruption_problems(dataset_class, block_size: int = 50, samples: int = 200, seed: int = 0,
                             corpus: str = TOY_CORPUS) -> list[str]:
    """``span_problems`` for ``dataset_class`` on one corpus, documents drawn in turn."""
    documents = corpus.split("\n")
    plan = {"corpus": corpus, "block_size": block_size, "seed": seed,
            "draws": [n % len(documents) for n in range(samples)]}
    inputs = {"plans": [plan]}
    return span_problems(inputs, plain(span_probe(_parts(CharCorruptionDataset=dataset_class), inputs)))
