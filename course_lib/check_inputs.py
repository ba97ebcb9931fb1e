"""Inputs the checks choose afresh each time they run: corpora, questions, weights, document draws.

Every function takes a ``random.Random``. The grader seeds it from the system's
entropy for each grading (so no submission knows its inputs in advance) and keeps
its own copy of what it sent; a notebook's public check seeds it with a fresh
seed it prints when the check fails, so the failure can be replayed. Nothing here
computes a graded answer: the weights are random values for the handout's
parameters, the texts random words.
"""
from __future__ import annotations

import random

import torch

from .attention import SynthesizerAttentionBase
from .datasets import CharCorruptionDatasetBase
from .model import GPT, GPTConfig

LETTERS = "abcdefghijklmnopqrstuvwxyz"
TOY_MODEL = dict(n_layer=1, n_head=2, n_embd=16)  # small enough to probe in a second
# the synthesizer's parameters as the handout names them: what a check loads and compares, nothing else
SYNTH_PARAMS = ("w1.weight", "w1.bias", "w2", "b2", "value.weight", "value.bias", "proj.weight", "proj.bias")


def word(rng: random.Random, low: int = 2, high: int = 9, capital: bool = False) -> str:
    text = "".join(rng.choice(LETTERS) for _ in range(rng.randint(low, high)))
    return text.capitalize() if capital else text


def sentence(rng: random.Random, length: int) -> str:
    """Random words of about ``length`` characters (exactly, once trimmed), never empty."""
    words = [word(rng, capital=True), word(rng, capital=True)]
    while len(" ".join(words)) < length:
        words.append(word(rng) + rng.choice(("", "", "", ",", ".")))
    return " ".join(words)[:length].rstrip() or "Ab"


def corpus(rng: random.Random, documents: int | None = None) -> str:
    """Documents of random words, lengths from a few characters to past any block; the question's letters included."""
    # 7-12 documents, never as many as a finetuning file has questions (3-6): final_tokens from
    # the wrong file can then never equal the right one
    documents = documents or rng.randint(7, 12)
    lines = [sentence(rng, rng.choice((rng.randint(6, 30), rng.randint(30, 120), rng.randint(120, 400))))
             for _ in range(documents)]
    # so that every character of "Where was NAME born?" and of any generated name is in the vocabulary
    lines[rng.randrange(len(lines))] = f"Where was {word(rng, capital=True)} born? {LETTERS} {LETTERS.upper()}"
    return "\n".join(lines)


def train_text(rng: random.Random, names: int | None = None) -> str:
    """Finetuning lines 'Where was NAME born?<TAB>PLACE', with the trailing newline a real file has."""
    names = names or rng.randint(3, 6)
    return "".join(f"Where was {word(rng, capital=True)} {word(rng, capital=True)} born?\t{word(rng, 3, 8, True)}\n"
                   for _ in range(names))


def random_state(module: torch.nn.Module, rng: random.Random, scale: float = 0.5,
                 names: tuple[str, ...] | None = None) -> dict[str, torch.Tensor]:
    """Random values for every parameter and buffer the module saves, or for ``names`` only."""
    generator = torch.Generator().manual_seed(rng.randrange(2 ** 62))
    state = module.state_dict()
    return {k: torch.randn(v.shape, generator=generator, dtype=v.dtype) * scale if v.is_floating_point() else v.clone()
            for k, v in state.items() if names is None or k in names}


def toy_world(rng: random.Random) -> dict:
    """A corpus, a finetuning file and a model shape for the glue checks."""
    block_size = rng.choice((64, 128))  # every generated question fits with its masks
    return {"corpus": corpus(rng), "block_size": block_size, "train_text": train_text(rng), "model": dict(TOY_MODEL)}


def toy_model(world: dict) -> GPT:
    vocab_size = CharCorruptionDatasetBase(world["corpus"], world["block_size"]).vocab_size
    return GPT(GPTConfig(vocab_size, world["block_size"], **world["model"]))


def item_indices(rng: random.Random, world: dict) -> list[int]:
    lines = world["train_text"].split("\n")
    return sorted(rng.sample(range(len(lines) - 1), min(3, len(lines) - 1)))


def token_ids(rng: random.Random, vocab_size: int, block_size: int) -> torch.Tensor:
    generator = torch.Generator().manual_seed(rng.randrange(2 ** 62))
    return torch.randint(0, vocab_size, (2, rng.randint(2, block_size)), generator=generator)  # (2, T)


def kept_cap(block_size: int) -> int:
    """The longest a truncated document may be: int(block_size * 7/8) (the handout's words)."""
    return int(block_size * 7 / 8)


def span_corpus(rng: random.Random, block_size: int, documents: int = 8) -> str:
    """Half the documents longer than the truncation cap (every kept length possible), half shorter, a few tiny."""
    cap = kept_cap(block_size)
    lengths = [rng.randint(cap + 1, 2 * cap + 40) for _ in range(documents // 2)]  # +1: trimming may drop a space
    lengths += [rng.randint(6, max(6, cap - 1)) for _ in range(documents - len(lengths) - 1)] + [rng.randint(4, 9)]
    rng.shuffle(lengths)
    return "\n".join(sentence(rng, n) for n in lengths)


def span_plan(rng: random.Random, block_size: int, samples: int) -> dict:
    """``samples`` document indices drawn independently, two thirds of them from the long documents, and a seed."""
    text = span_corpus(rng, block_size)
    documents = text.split("\n")
    long = [i for i, d in enumerate(documents) if len(d) >= kept_cap(block_size)]
    short = [i for i in range(len(documents)) if i not in long]
    draws = [rng.choice(long) if short == [] or rng.random() < 2 / 3 else rng.choice(short) for _ in range(samples)]
    return {"corpus": text, "block_size": block_size, "draws": draws, "seed": rng.randrange(2 ** 31)}


def synthesizer_config(n_embd: int, n_head: int, block_size: int, attn_pdrop: float = 0.1,
                       resid_pdrop: float = 0.1) -> GPTConfig:
    """The one-layer config a synthesizer check builds its layer from (vocabulary unused)."""
    return GPTConfig(vocab_size=4, block_size=block_size, n_layer=1, n_head=n_head, n_embd=n_embd,
                     attn_pdrop=attn_pdrop, resid_pdrop=resid_pdrop)


def handout_state(rng: random.Random, dims, scale: float = 0.5) -> dict[str, torch.Tensor]:
    """Random values for the synthesizer's handout parameters (w1, w2, b2, value, proj) of these dims."""
    layer = SynthesizerAttentionBase(synthesizer_config(*dims))
    return random_state(layer, rng, scale, names=SYNTH_PARAMS)


def sequence_inputs(rng: random.Random, n_embd: int, block_size: int, lengths=None) -> list[torch.Tensor]:
    """Inputs (B, T, C): for each length a batch, the same batch with its last position changed, and a prefix."""
    generator = torch.Generator().manual_seed(rng.randrange(2 ** 62))
    lengths = lengths or sorted({1, max(1, block_size // 2), block_size - 1})
    inputs = []
    for T in lengths:
        x = torch.randn(rng.randint(2, 6), T, n_embd, generator=generator)  # (B, T, C)
        inputs.append(x)
        if T >= 2:
            changed = x.clone()
            changed[:, -1] += torch.randn(n_embd, generator=generator)
            inputs.append(changed)
    if lengths[-1] >= 4:
        inputs.append(inputs[-2][:, : lengths[-1] // 2].clone())  # a prefix of the longest input
    return inputs
