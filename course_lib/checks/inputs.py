"""Inputs the checks choose afresh each time they run: corpora, questions, weights, document draws.

Every function takes a ``random.Random``. The grader seeds it from the system's
entropy for each grading (so no submission knows its inputs in advance) and keeps
its own copy of what it sent; a notebook's public check seeds it with a fresh
seed it prints when the check fails, so the failure can be replayed. Nothing here
computes a graded answer: the weights are random values for the handout's
parameters, the texts random words.

Every size drawn avoids ``HANDOUT_NUMBERS``, the integers the release notebooks and
course_lib/presets.py show (tests/course_lib/checks/test_inputs.py scans them): an answer
that types in a number it saw instead of reading a size from its arguments
(200 * len(dataset) * 128, a head size of 16) is then wrong on every draw, never right
by the luck of one seed.
"""
from __future__ import annotations

import random

import torch

from course_lib.gpt.attention import SynthesizerAttentionBase
from course_lib.gpt.datasets import CharCorruptionDatasetBase
from course_lib.gpt.model import GPT, GPTConfig

LETTERS = "abcdefghijklmnopqrstuvwxyz"
# every integer the handout shows (sizes, lengths, counts, steps): no drawn size is one of them
HANDOUT_NUMBERS = frozenset({0, 1, 2, 3, 4, 5, 6, 7, 8, 10, 11, 12, 13, 16, 17, 20, 25, 28, 30, 32, 40, 64, 75, 100,
                             128, 150, 160, 180, 200, 256, 300, 512, 600, 650, 1500, 2000, 2938, 9300, 10000, 20000})
# head and layer counts are small: they avoid only the counts the handout's models use (presets,
# notebooks, the original grader's 3 heads), not every small number shown
HEAD_COUNTS = (5, 6, 7)  # never 1, 2, 3, 4 or 8
LAYER_COUNTS = (3, 5)  # never 1, 2 or 4
# dropout rates of the checks' models: neither the handout's 0.1 nor the CPU presets' 0.0, so a
# model built from anything but the given config shows it
DROPOUT_RATES = (0.05, 0.15, 0.2, 0.25, 0.3, 0.35)
# synthesizer parameters as the handout names them: what a check loads and compares, nothing else
SYNTH_PARAMS = ("w1.weight", "w1.bias", "w2", "b2", "value.weight", "value.bias", "proj.weight", "proj.bias")


def draw_size(rng: random.Random, low: int, high: int) -> int:
    """A size in [low, high] that the handout never shows (HANDOUT_NUMBERS)."""
    return rng.choice([n for n in range(low, high + 1) if n not in HANDOUT_NUMBERS])


def draw_heads(rng: random.Random, head_sizes: tuple[int, int] = (9, 15)) -> tuple[int, int]:
    """(n_head, n_embd): a head count of HEAD_COUNTS, and a head size and width the handout never shows."""
    n_head = rng.choice(HEAD_COUNTS)
    widths = [n_head * hs for hs in range(head_sizes[0], head_sizes[1] + 1)
              if hs not in HANDOUT_NUMBERS and n_head * hs not in HANDOUT_NUMBERS]
    return n_head, rng.choice(widths)


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
    # so every character of "Where was NAME born?" and of any generated name is in the vocabulary
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


def toy_world(rng: random.Random, dropout: bool = True) -> dict:
    """A corpus, a finetuning file, a block size and a model shape for the glue checks, every size drawn.

    The model's dropout rates are drawn too (``dropout``), or all 0 where a check trains it a step and compares
    with the step the judge takes (no random mask then, whatever else uses torch's generator)."""
    block_size = draw_size(rng, 48, 120)  # from 48: every generated question fits with its masks
    n_head, n_embd = draw_heads(rng)
    rates = rng.sample(DROPOUT_RATES, 3) if dropout else [0.0] * 3
    model = dict(n_layer=rng.choice(LAYER_COUNTS), n_head=n_head, n_embd=n_embd,
                 **dict(zip(("embd_pdrop", "resid_pdrop", "attn_pdrop"), rates)))
    return {"corpus": corpus(rng), "block_size": block_size, "train_text": train_text(rng), "model": model}


def toy_model(world: dict) -> GPT:
    vocab_size = CharCorruptionDatasetBase(world["corpus"], world["block_size"]).vocab_size
    return GPT(GPTConfig(vocab_size, world["block_size"], **world["model"]))


def item_indices(rng: random.Random, world: dict) -> list[int]:
    lines = world["train_text"].split("\n")
    return sorted(rng.sample(range(len(lines) - 1), min(3, len(lines) - 1)))


def token_ids(rng: random.Random, vocab_size: int, block_size: int) -> torch.Tensor:
    generator = torch.Generator().manual_seed(rng.randrange(2 ** 62))
    # (2, T)
    return torch.randint(0, vocab_size, (2, rng.randint(2, block_size)), generator=generator)


def kept_cap(block_size: int) -> int:
    """The longest a truncated document may be: int(block_size * 7/8) (the handout's words)."""
    return int(block_size * 7 / 8)


def span_block(rng: random.Random, low: int, high: int) -> int:
    """A block size in [low, high] the handout never shows, whose 7/8 ``round`` takes up: a cap of
    round(block_size * 7/8) for int(...) then keeps one character too many on every seed, never only on some."""
    return rng.choice([n for n in range(low, high + 1)
                       if n not in HANDOUT_NUMBERS and round(n * 7 / 8) != kept_cap(n)])


# the course data's own edge cases, in every span corpus (span_lengths adds block_size and the cap)
EDGE_LENGTHS = (0, 1, 2, 3)  # wiki.txt ends with an empty document; 1-3 are under any truncation
LONGEST_DOCUMENT = 516  # the original wiki.txt's longest (the world's are under 90)
# kept whole on almost every draw: what is masked of them shows whether the masked length comes
# from the kept text (one drawn from the truncation length would mask all of them)
TINY_LENGTHS = (4, 5, 6, 7, 8)
EDGE_DRAWS = 3  # draws of each edge document per plan, before all others


def text_of_length(rng: random.Random, n: int) -> str:
    """Random words of exactly ``n`` characters, no space at either end ("" for 0)."""
    if n == 0:
        return ""
    text = sentence(rng, n)
    text = (text + "".join(rng.choice(LETTERS) for _ in range(n - len(text))))[:n]
    return text[:-1] + rng.choice(LETTERS) if text.endswith(" ") else text


def span_lengths(rng: random.Random, block_size: int, documents: int = 8) -> list[int]:
    """The edge lengths, the tiny ones, half of ``documents`` longer than the cap and half shorter, shuffled."""
    cap = kept_cap(block_size)
    lengths = [*EDGE_LENGTHS, *TINY_LENGTHS, block_size, cap, rng.randint(LONGEST_DOCUMENT, LONGEST_DOCUMENT + 100)]
    lengths += [rng.randint(cap + 1, 2 * cap + 40) for _ in range(documents // 2)]
    lengths += [rng.randint(max(TINY_LENGTHS) + 1, cap - 1) for _ in range(documents - documents // 2)]
    rng.shuffle(lengths)
    return lengths


def span_corpus(rng: random.Random, block_size: int, documents: int = 8) -> str:
    """Documents of random words, of exactly the lengths ``span_lengths`` draws."""
    return "\n".join(text_of_length(rng, n) for n in span_lengths(rng, block_size, documents))


def span_plan(rng: random.Random, block_size: int, samples: int, tiny_share: float = 1 / 3,
              cut_draws: int = 0) -> dict:
    """``samples`` document indices (more where ``cut_draws`` asks) and a seed: each edge document EDGE_DRAWS times
    first, then in a random order a ``tiny_share`` of the rest on the tiny documents and three in four of the others
    on documents the truncation cuts (longer than the cap), at least ``cut_draws`` of those."""
    text = span_corpus(rng, block_size)
    lengths = [len(d) for d in text.split("\n")]
    cap = kept_cap(block_size)
    edge = [i for i, n in enumerate(lengths) if n in EDGE_LENGTHS or n in (cap, block_size) or n >= LONGEST_DOCUMENT]
    tiny = [i for i, n in enumerate(lengths) if n in TINY_LENGTHS]
    cut = [i for i, n in enumerate(lengths) if n > cap]
    short = [i for i, n in enumerate(lengths) if max(TINY_LENGTHS) < n < cap]
    rest = [rng.choice(tiny) for _ in range(int((samples - EDGE_DRAWS * len(edge)) * tiny_share))]
    others = samples - EDGE_DRAWS * len(edge) - len(rest)
    long_draws = max(cut_draws, round(others * 3 / 4))
    rest += [rng.choice(cut) for _ in range(long_draws)] + [rng.choice(short) for _ in range(others - long_draws)]
    rng.shuffle(rest)
    # edge documents first, shortest first: a dataset that cannot take one fails on the same
    # document whatever the seed (the empty one, when it is that)
    draws = sorted(edge, key=lengths.__getitem__) * EDGE_DRAWS + rest
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
