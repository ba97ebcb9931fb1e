"""The span-corruption checks (notebook 03): inputs, probe and judge, public and hidden alike.

Each plan is a corpus of the course data's own kinds of documents (``course_lib.checks.inputs.span_corpus``:
empty and 1-3 characters long, tiny, exactly the block size, exactly the truncation cap, as long as the
original's longest, and documents longer and shorter than the cap), a list of document draws and a seed. The
probe seeds Python's and torch's generators once and reads the student's dataset at every draw; the judge
checks every example against its own document (``span_problems`` says what, and how often a right answer
fails).
"""
from __future__ import annotations

import bisect
import math
import random
import types
from collections import defaultdict

import numpy as np
import torch

from course_lib.checks.common import DELTA, plain
from course_lib.checks.inputs import TINY_LENGTHS, kept_cap, span_block, span_plan
from course_lib.gpt.datasets import CharCorruptionDatasetBase
from course_lib.gpt.vocab import MASK_CHAR, PAD_CHAR

# a block size drawn in each range, with its number of samples
SPAN_PUBLIC = dict(block_sizes=((47, 63), (129, 199)), samples=(1500, 6000))
# what a __getitem__ raises on some documents (randint's empty range, an index past the end,
# a division by 0): the judge names the document; anything else (a timeout) ends the probe
CRASHES = (ArithmeticError, AssertionError, AttributeError, LookupError, TypeError, ValueError, RuntimeError)
SHORT_KEPT = max(TINY_LENGTHS)  # texts kept whole up to this long: the mean test's short pool
# the relative pool's shortest text: a span a sixth or an eighth of the text on average is within
# SPEC's +-1.5 characters of L/4 for short texts, and far outside it from this length on
RELATIVE_FROM = 24
PAIRS = 37  # pairs a randomness test needs: 0.5^37 < DELTA


def every_length_draws(upper: int, delta: float = DELTA) -> int:
    """Draws on documents longer than a length L that make a right answer keep L at least once with probability
    >= 1 - delta / (upper - 3), for every L of 4..upper at once >= 1 - delta (see span_problems)."""
    values = upper - 3
    return math.ceil(math.log(delta / values) / math.log(1 - 1 / values))


def span_inputs(rng: random.Random, block_sizes=SPAN_PUBLIC["block_sizes"], samples=SPAN_PUBLIC["samples"],
                every_length: bool = True) -> dict:
    """A plan per (low, high) of ``block_sizes``: a block size the handout never shows (``span_block``) and its
    samples, with (``every_length``) enough draws on documents the truncation cuts to see every kept length."""
    plans = []
    for (low, high), n in zip(block_sizes, samples):
        block_size = span_block(rng, low, high)
        cut_draws = every_length_draws(kept_cap(block_size)) if every_length else 0
        plans.append(span_plan(rng, block_size, n, cut_draws=cut_draws))
    return {"plans": plans}


def _pack(samples: list) -> dict:
    """A plan's (x, y) pairs: stacked when all are 1-D tensors of one shape and dtype (int64 ids as uint8 or int32, the
    dtype named), else the raw pairs up to the first odd one (the answer is wrong then; the judge says how)."""
    pairs = [tuple(p) if isinstance(p, list) else p for p in samples]
    first = pairs[0] if pairs else None
    for n, pair in enumerate(pairs):
        ok = isinstance(pair, tuple) and len(pair) == 2 and all(isinstance(t, torch.Tensor) for t in pair)
        if not (ok and pair[0].dim() == 1 and pair[0].shape == pair[1].shape == first[0].shape
                and pair[0].dtype == pair[1].dtype == first[0].dtype):
            return {"samples": [list(p) if isinstance(p, tuple) else [p] for p in pairs[: n + 1]]}
    if not pairs:
        return {"samples": []}
    x = torch.stack([p[0] for p in pairs]).detach().cpu()  # (S, block_size - 1)
    y = torch.stack([p[1] for p in pairs]).detach().cpu()
    dtype = str(x.dtype)
    low, high = (min(x.min(), y.min()), max(x.max(), y.max())) if x.dtype == torch.int64 and x.numel() else (-1, 0)
    narrow = torch.uint8 if high < 2 ** 8 else torch.int32  # a character vocabulary's ids: a quarter of int32's bytes
    if low >= 0 and high < 2 ** 31:  # the same ids, fewer bytes on the wire
        x, y = x.to(narrow), y.to(narrow)
    return {"x": x, "y": y, "dtype": dtype}


def span_probe(parts, inputs: dict) -> list[dict]:
    """For each plan: the (x, y) the student's dataset gives for each drawn document, after seeding once; where
    ``__getitem__`` raised, the examples before it and the error's type and draw (never its text)."""
    out = []
    for plan in inputs["plans"]:
        dataset = parts.CharCorruptionDataset(plan["corpus"], plan["block_size"])
        random.seed(plan["seed"])
        torch.manual_seed(plan["seed"])
        samples, crash = [], None
        for n, idx in enumerate(plan["draws"]):
            try:
                samples.append(dataset[idx])
            except NotImplementedError:
                raise
            except CRASHES as err:
                crash = {"error": type(err).__name__, "draw": n}
                break
        out.append({**_pack(samples), **(crash or {})})
    return out


def _odd_sample(pair, block_size: int) -> str:
    """What is wrong with one raw (x, y) that could not be stacked with the others."""
    if not (isinstance(pair, list) and len(pair) == 2 and all(isinstance(t, torch.Tensor) for t in pair)):
        return "__getitem__ should return two tensors (x, y)"
    x, y = pair
    if x.is_floating_point() or y.is_floating_point() or x.dtype != y.dtype:
        return f"x and y should be LongTensors (torch.long), got {x.dtype} and {y.dtype}"
    return f"x and y should both have shape ({block_size - 1},), got {tuple(x.shape)} and {tuple(y.shape)}"


def _crash(plan: dict, got: dict) -> str | None:
    """What a crash of __getitem__ says: its error type and the length of the document it could not take."""
    draw = got.get("draw")
    error = got.get("error")
    if not (isinstance(draw, int) and 0 <= draw < len(plan["draws"]) and isinstance(error, str)
            and error.isidentifier()):
        return None
    length = len(plan["corpus"].split("\n")[plan["draws"][draw]])
    where = ("an empty document (wiki.txt ends with one)" if length == 0 else
             f"a document of {length} character{'s' if length != 1 else ''}")
    return f"__getitem__ raised {error} on {where}: every document must give an example, however short or long"


def _span_rows(plan: dict, got) -> tuple[torch.Tensor, torch.Tensor] | str:
    """The plan's x and y rows as int64 tensors (draws, block_size - 1), or what is wrong with their form."""
    block_size = plan["block_size"]
    if isinstance(got, dict) and "error" in got:
        crash = _crash(plan, got)
        if crash:
            return crash
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
    return x.long(), y.long()


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


def relative_tolerance(kept: list[int], delta: float = DELTA) -> float:
    """The largest |mean((masked - L/4) / L)| a right answer shows with probability >= 1 - delta (span_problems)."""
    n, log = len(kept), math.log(2 / delta)
    reach = log / 3  # each centred (masked - L/4) / L lies within +-1
    spread = reach + math.sqrt(reach * reach + 2 * (n / 16) * log)  # each sd at most 1/4
    return 1.5 * sum(1 / k for k in kept) / n + spread / n


def span_problems(inputs: dict, output) -> list[str]:
    """What the samples break of span corruption (empty: none), every sample checked against its own document.

    Deterministic, per sample: __getitem__ returns for every document (the corpora hold
    the course data's edge cases, an empty document among them); LongTensors of shape
    (block_size - 1,), ids of the vocabulary, y = x shifted by one, padding only at the
    end, exactly ``prefix⁇suffix⁇masked⁇`` (the final mask included), prefix + masked +
    suffix the start of the document, 4 <= L <= u = int(block_size * 7/8) (L = the whole
    document when it is shorter than 4).

    Statistical, each at most DELTA = 1e-11 to fail a right answer (a check has at most
    3 per plan + 5 events: <= 1e-9 for up to 30 plans):
    - every kept length (per plan): the handout draws L uniformly from the u - 3 lengths
      4..u (``random.randint(4, u)``), so a right answer keeps each length l of 4..u with
      probability at least p = 1/(u - 3) on a document longer than l (exactly p when it cuts
      the document to L; 1/(min(d, u) - 3) >= p when it draws L from the lengths the
      document allows). Over the n_l draws on documents longer than l, l is never kept with
      probability <= (1 - p)^n_l. Each l with (1 - p)^n_l <= DELTA/(u - 3) must occur: all
      of them at once fail a right answer with probability <= DELTA (a union bound over at
      most u - 3 lengths). A public plan draws ``every_length_draws(u)`` documents longer
      than u, so every l of 4..u is checked there; where fewer draws leave the longest
      lengths unchecked (the hidden plans of the largest blocks), the longest kept length
      over the n draws on documents at least u long must be >= u - m, m the least with
      (1 - (m + 1)/(u - 3))^n <= DELTA (``extreme_slack``): one more event.
    - masked length mean, twice (all plans pooled; then only the texts of 4 to SHORT_KEPT
      characters kept whole, where a masked length drawn from anything but the kept text
      shows most): o_i = masked_i - L_i/4. A right answer has |E[o_i | L_i]| <= 1.5
      (SPEC's band) and, as every right answer the course knows (uniform on 1..L/2,
      Gaussian of sd L/8), sd <= L_i/4; the centred o_i lie within +-L_i <= R. Bernstein's
      inequality gives P(|sum(o_i - E o_i)| >= t) <= 2 exp(-t^2 / (2 (V + R t / 3))),
      V = sum(L_i^2)/16; ``mean_tolerance`` is 1.5 + t/n for the t at which that is DELTA.
    - masked length relative to the text (texts of RELATIVE_FROM characters or more):
      u_i = (masked_i - L_i/4) / L_i has |E[u_i | L_i]| <= 1.5 / L_i (the same band), sd
      <= 1/4, and the centred u_i lie within +-1; Bernstein with V = n/16, R = 1 bounds
      |mean(u)| by 1.5 mean(1/L_i) + t/n (``relative_tolerance``). Its spread shrinks like
      1/(4 sqrt(n)) whatever the lengths, so a span a sixth or an eighth of the text on
      average fails it on every draw where the pooled test above would hesitate.
    - masked length random (all plans pooled): draws of the same L >= 12 are paired;
      when there are k >= 37 pairs, some pair must differ. A right answer that gives
      no masked length more than probability 1/2 fails with probability <= 2^-k <= DELTA.
    - masked span's position random (all plans pooled): draws of one document with the
      same kept and masked lengths L and m, L - m >= 3, are paired by where the span
      starts; with k >= 37 pairs some pair must differ. A right answer that starts the
      span at no place with probability more than 1/2 (any draw from 2 or more places)
      fails with probability <= 2^-k <= DELTA.
    """
    if not isinstance(output, list) or len(output) != len(inputs["plans"]):
        return ["the span corruption samples did not come back complete"]
    pooled = {"kept": [], "offsets": [], "short_kept": [], "short_offsets": [], "long_kept": [], "relative": [],
              "by_kept": defaultdict(list), "starts": defaultdict(list)}
    for number, (plan, got) in enumerate(zip(inputs["plans"], output)):
        rows = _span_rows(plan, got)
        problems = [rows] if isinstance(rows, str) else _plan_problems(number, plan, *rows, pooled)
        if problems:  # one line each, what to fix first and the block size last
            return [f"{problem} (block_size {plan['block_size']})" for problem in problems]
    return _masked_problems(pooled)


def _spelled(xs: torch.Tensor, ys: torch.Tensor, itos: list[str]) -> list[str] | None:
    """Each example's text, x and then the last of y, as the vocabulary spells it; None when an id lies outside it.

    The same texts, and the same failures, as spelling each example in turn with ``itos[id]``: the first example
    holding an id of len(itos) or more makes it None, unless an earlier one holds a negative id that Python's
    indexing cannot wrap, which raises IndexError there (the judge's crash); negative ids within reach wrap."""
    size = len(itos)
    ids = torch.cat([xs, ys[:, -1:]], dim=1)  # (draws, block_size): what each text is spelled from
    above = torch.maximum(xs.max(dim=1).values, ys.max(dim=1).values) >= size  # (draws,)
    below = (ids < -size).any(dim=1)  # (draws,)
    first_above = int(above.nonzero()[0]) if above.any() else len(ids)
    first_below = int(below.nonzero()[0]) if below.any() else len(ids)
    if first_below < first_above:
        raise IndexError("list index out of range")
    if first_above < len(ids):
        return None
    table = [ord(c) if len(c) == 1 else 0 for c in itos]
    if 0 in table:  # a symbol numpy's strings cannot hold: spelled one by one
        return ["".join(itos[i] for i in row) for row in ids.tolist()]
    codes = np.asarray(table, dtype=np.uint32)[ids.numpy()]  # (draws, block_size) code points
    return np.ascontiguousarray(codes).view(f"U{codes.shape[1]}").ravel().tolist()


def _plan_problems(number: int, plan: dict, xs: torch.Tensor, ys: torch.Tensor, pooled: dict) -> list[str]:
    """The deterministic properties of every sample of one plan, and its truncation's reach; one line per kind of
    mistake (the first example of each kind says it, a kept length out of range its farthest)."""
    block_size = plan["block_size"]
    vocab = CharCorruptionDatasetBase(plan["corpus"], block_size).vocab
    itos = [vocab.itos[i] for i in range(len(vocab))]
    documents = plan["corpus"].split("\n")
    upper = kept_cap(block_size)
    cuts = []  # (document length, kept length) of every example of 4 or more characters kept
    problems: dict[str, str] = {}  # kind -> message, in the order first met
    outside = []  # kept lengths outside 4..upper

    def fail(kind: str, message: str) -> None:
        problems.setdefault(kind, message)

    texts = _spelled(xs, ys, itos)
    if texts is None:
        return ["x and y should hold indices of the dataset's vocabulary (stoi)"]
    unshifted = (xs[:, 1:] != ys[:, :-1]).any(dim=1).tolist()  # (draws,)
    for idx, text, off in zip(plan["draws"], texts, unshifted):
        if off:
            fail("shift", "y should be x shifted left by one character (x[1:] == y[:-1])")
        body = text.rstrip(PAD_CHAR)
        if PAD_CHAR in body:
            fail("padding", "padding should appear only at the end of an example")
        parts = body.split(MASK_CHAR)
        if len(parts) != 4 or parts[3] != "":
            fail("layout", f"an example should look like prefix{MASK_CHAR}suffix{MASK_CHAR}masked{MASK_CHAR} then "
                           "padding, an empty document's too")
            continue
        prefix, suffix, masked = parts[:3]
        kept = len(prefix) + len(masked) + len(suffix)
        document = documents[idx]
        if not document.startswith(prefix + masked + suffix):
            fail("order", "prefix + masked + suffix should be the start of the document, in order")
        if not min(4, len(document)) <= kept <= upper:  # a document shorter than 4 is kept whole
            outside.append(kept)
        if kept < 4:
            continue  # a document of 0-3 characters: any split of it is right
        cuts.append((len(document), kept))
        pooled["kept"].append(kept)
        pooled["offsets"].append(len(masked) - kept / 4)
        if kept >= RELATIVE_FROM:
            pooled["long_kept"].append(kept)
            pooled["relative"].append(len(masked) / kept - 1 / 4)
        if kept == len(document) <= SHORT_KEPT:
            pooled["short_kept"].append(kept)
            pooled["short_offsets"].append(len(masked) - kept / 4)
        pooled["by_kept"][kept].append(len(masked))
        if kept - len(masked) >= 3:
            pooled["starts"][(number, idx, kept, len(masked))].append(len(prefix))
    if outside:
        farthest = max(outside) if max(outside) > upper else min(outside)
        fail("range", f"keep 4 to int(block_size * 7/8) = {upper} characters of a document: one example kept "
                      f"{farthest}")
    return list(problems.values()) or _truncation_problems(cuts, upper)


def _spans(lengths: list[int]) -> str:
    """Sorted lengths as runs ("4", "37-42", "4, 9-11"), the first five runs at most."""
    runs: list[list[int]] = []
    for n in lengths:
        if runs and n == runs[-1][1] + 1:
            runs[-1][1] = n
        else:
            runs.append([n, n])
    text = [str(a) if a == b else f"{a}-{b}" for a, b in runs]
    return ", ".join(text[:5]) + (", ..." if len(text) > 5 else "")


def _truncation_problems(cuts: list[tuple[int, int]], upper: int) -> list[str]:
    """Every kept length of 4..upper seen, as far as the draws can say; the longest end otherwise (span_problems)."""
    values = upper - 3
    lengths = sorted(d for d, _ in cuts)
    seen = {kept for d, kept in cuts if kept < d}
    need = every_length_draws(upper)
    checked = [n for n in range(4, upper + 1) if len(lengths) - bisect.bisect_right(lengths, n) >= need]
    missing = [n for n in checked if n not in seen]
    if missing:
        return [f"the truncation length never took {_spans(missing)}: draw it from all of 4..int(block_size * 7/8) "
                f"= {upper}, each equally likely"]
    if checked and checked[-1] == upper:
        return []
    long_kept = [kept for d, kept in cuts if d >= upper]
    slack = extreme_slack(len(long_kept), values)
    if slack is not None and max(long_kept) < upper - slack:
        return [f"the truncation length never reached past {max(long_kept)}: draw it from all of "
                f"4..int(block_size * 7/8) = {upper}, each equally likely"]
    return []


def _pairs(groups) -> list[tuple[int, int]]:
    """Consecutive pairs of each group's values (independent draws of the same kind)."""
    return [(a, b) for values in groups for a, b in zip(values[0::2], values[1::2])]


def _mean_off(offsets: list[float], kept: list[int]) -> float | None:
    """The mean offset when it is past what a right answer shows (mean_tolerance); None otherwise."""
    mean = sum(offsets) / len(offsets) if offsets else 0.0
    return mean if offsets and abs(mean) > mean_tolerance(kept) else None


def _masked_problems(pooled: dict) -> list[str]:
    """The masked span's length (a quarter of L on average, random) and position (random): see span_problems."""
    # short texts first (their message names the mistake: a length drawn from the truncation), then
    # a span a fixed share of the text off a quarter (it shows on every draw), then all texts
    problems = []
    relative = pooled["relative"]
    short = _mean_off(pooled["short_offsets"], pooled["short_kept"])
    mean = sum(relative) / len(relative) if relative else 0.0
    if short is not None:
        problems = [f"draw the masked length from the text kept, not from the truncation length: in documents of 4 "
                    f"to {SHORT_KEPT} characters kept whole it is off a quarter of the text by {short:+.1f} "
                    f"characters on average ({len(pooled['short_offsets'])} examples)"]
    elif relative and abs(mean) > relative_tolerance(pooled["long_kept"]):
        problems = [f"the masked span should be a quarter of the kept text on average; it was {1 / 4 + mean:.3f} of "
                    f"it in texts of {RELATIVE_FROM} characters or more ({len(relative)} examples)"]
    elif (off := _mean_off(pooled["offsets"], pooled["kept"])) is not None:
        problems = [f"the masked span should be a quarter of the kept text on average; it was off by {off:+.1f} "
                    f"characters ({len(pooled['offsets'])} examples)"]
    lengths = _pairs(masked for kept, masked in pooled["by_kept"].items() if kept >= 12)
    if len(lengths) >= PAIRS and all(a == b for a, b in lengths):
        problems.append("the masked span's length should be random: every text of one length masked as many "
                        "characters")
    starts = _pairs(pooled["starts"].values())
    if len(starts) >= PAIRS and all(a == b for a, b in starts):
        problems.append(f"where the masked span starts should be random: over {len(starts)} pairs of examples of one "
                        "document with the same kept and masked lengths, it always started at the same place")
    return problems


# --- for the course's own tests: a dataset class judged on one corpus ----------------------------

TOY_CORPUS = "\n".join([
    "Ada Quill. Ada Quill was born in Marlow and later taught mathematics in Tessary for many years .",
    "Bo Renn. Born in Ostheim, Renn trained as a carpenter before moving to Calder to build bridges .",
    "Cyd Vane. Cyd Vane (born 1901 in Pellow - died 1970 in Ardent) was a poet and a printer .",
    "Dara Moss. A native of Lunet, Dara Moss studied botany in Fennick and wrote about mosses .",
    "Eli Stroud. Eli Stroud is an engineer who was born in Carrow and now lives in Wexley .",
    "Fay Orr. Where was Fay Orr born? In Tillby, though she grew up by the sea near Harlow .",
])


def span_corruption_problems(dataset_class, block_size: int = 50, samples: int = 200, seed: int = 0,
                             corpus: str = TOY_CORPUS) -> list[str]:
    """``span_problems`` for ``dataset_class`` on one corpus, documents drawn in turn."""
    documents = corpus.split("\n")
    plan = {"corpus": corpus, "block_size": block_size, "seed": seed,
            "draws": [n % len(documents) for n in range(samples)]}
    inputs = {"plans": [plan]}
    return span_problems(inputs, plain(span_probe(types.SimpleNamespace(CharCorruptionDataset=dataset_class), inputs)))
