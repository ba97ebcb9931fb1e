"""Inputs the grader chooses afresh for each grading: corpora, questions, weights, sample draws.

Every function takes a ``random.Random`` seeded from the system's entropy for
this grading, so no submission can know its inputs in advance; the grader keeps
its own copy of what it sent, and the judges compare against that copy.
"""
from __future__ import annotations

import random

import torch

from course_lib.datasets import CharCorruptionDatasetBase
from course_lib.model import GPT, GPTConfig

LETTERS = "abcdefghijklmnopqrstuvwxyz"
TOY_MODEL = dict(n_layer=1, n_head=2, n_embd=16)  # small enough to probe in a second
SPAN_BLOCK_SIZES = (24, 50, 128, 200)  # from 24 up, 7/8 of the block plus three masks fits
SYNTH_SHAPES = ((6, 3, 8), (16, 4, 12), (32, 8, 20), (12, 1, 5))  # (n_embd, n_head, block_size)


def word(rng: random.Random, low: int = 2, high: int = 9, capital: bool = False) -> str:
    text = "".join(rng.choice(LETTERS) for _ in range(rng.randint(low, high)))
    return text.capitalize() if capital else text


def corpus(rng: random.Random, documents: int | None = None) -> str:
    """Documents of random words, lengths from a few characters to past any block; the question's letters included."""
    # 7-12 documents, never as many as a finetuning file has questions (3-6): final_tokens from
    # the wrong file can then never equal the right one
    documents = documents or rng.randint(7, 12)
    lines = []
    for _ in range(documents):
        target = rng.choice((rng.randint(6, 30), rng.randint(30, 120), rng.randint(120, 400)))
        words = [word(rng, capital=True), word(rng, capital=True)]
        while len(" ".join(words)) < target:
            words.append(word(rng) + rng.choice(("", "", "", ",", ".")))
        lines.append(" ".join(words)[:target].rstrip() or "Ab")
    # so that every character of "Where was NAME born?" and of any generated name is in the vocabulary
    lines[rng.randrange(len(lines))] = f"Where was {word(rng, capital=True)} born? {LETTERS} {LETTERS.upper()}"
    return "\n".join(lines)


def train_text(rng: random.Random, names: int | None = None) -> str:
    """Finetuning lines 'Where was NAME born?<TAB>PLACE', with the trailing newline a real file has."""
    names = names or rng.randint(3, 6)
    return "".join(f"Where was {word(rng, capital=True)} {word(rng, capital=True)} born?\t{word(rng, 3, 8, True)}\n"
                   for _ in range(names))


def random_state(module: torch.nn.Module, rng: random.Random, scale: float = 0.5) -> dict[str, torch.Tensor]:
    """Random values for every parameter and buffer the module saves (not just its initial ones)."""
    generator = torch.Generator().manual_seed(rng.randrange(2 ** 62))
    return {k: torch.randn(v.shape, generator=generator, dtype=v.dtype) * scale if v.is_floating_point() else v.clone()
            for k, v in module.state_dict().items()}


def toy_world(rng: random.Random) -> dict:
    """A corpus, a finetuning file and a model shape for the glue checks."""
    block_size = rng.choice((64, 128))  # every generated question fits with its masks
    text = corpus(rng)
    return {"corpus": text, "block_size": block_size, "train_text": train_text(rng), "model": dict(TOY_MODEL)}


def toy_model(world: dict) -> GPT:
    vocab_size = CharCorruptionDatasetBase(world["corpus"], world["block_size"]).vocab_size
    return GPT(GPTConfig(vocab_size, world["block_size"], **world["model"]))


def item_indices(rng: random.Random, world: dict) -> list[int]:
    lines = world["train_text"].split("\n")
    return sorted(rng.sample(range(len(lines) - 1), min(3, len(lines) - 1)))


def span_plans(rng: random.Random, block_sizes=SPAN_BLOCK_SIZES, corpora: int = 2, samples: int = 300) -> list[dict]:
    """Draws (document index, random seed) over fresh corpora and several block sizes."""
    plans = []
    for _ in range(corpora):
        text = corpus(rng, rng.randint(6, 10))
        documents = len(text.split("\n"))
        for block_size in block_sizes:
            draws = [[n % documents, rng.randrange(2 ** 31)] for n in range(samples)]
            plans.append({"corpus": text, "block_size": block_size, "draws": draws})
    return plans


def synthesizer_case(rng: random.Random, dims, reference_class, lengths=None) -> dict:
    """Random weights for a layer of these dims and inputs: full, last position changed, a shorter prefix."""
    n_embd, n_head, block_size = dims
    layer = reference_class(GPTConfig(4, block_size, n_layer=1, n_head=n_head, n_embd=n_embd))
    generator = torch.Generator().manual_seed(rng.randrange(2 ** 62))
    lengths = lengths or sorted({1, max(1, block_size // 2), block_size - 1})
    inputs = []
    for T in lengths:
        x = torch.randn(rng.randint(2, 6), T, n_embd, generator=generator)
        inputs.append(x)
        if T >= 2:
            changed = x.clone()
            changed[:, -1] += torch.randn(n_embd, generator=generator)
            inputs.append(changed)
    if lengths[-1] >= 4:
        inputs.append(inputs[-2][:, : lengths[-1] // 2].clone())  # a prefix of the longest input
    return {"dims": list(dims), "state": random_state(layer, rng), "inputs": inputs}


def token_ids(rng: random.Random, vocab_size: int, block_size: int) -> torch.Tensor:
    generator = torch.Generator().manual_seed(rng.randrange(2 ** 62))
    return torch.randint(0, vocab_size, (2, rng.randint(2, block_size)), generator=generator)
