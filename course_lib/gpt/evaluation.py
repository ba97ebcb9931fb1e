"""Greedy decoding of birth-place questions, predictions files and accuracy."""
from __future__ import annotations

from collections import Counter, defaultdict
from pathlib import Path

import torch
from torch import nn

from course_lib.data_files import BirthExample, read_birth_places
from course_lib.gpt.vocab import MASK_CHAR, Vocabulary

DECODE_STEPS = 32  # characters generated after "question⁇" (SPEC: Evaluation)


def _greedy_plain(model: nn.Module, x: torch.Tensor, steps: int, context: int) -> torch.Tensor:
    for _ in range(steps):
        x_cond = x if x.size(1) <= context else x[:, -context:]
        logits, _ = model(x_cond)  # (b, T, vocab)
        x = torch.cat([x, logits[:, -1, :].argmax(dim=-1, keepdim=True)], dim=1)
    return x


def _greedy_cached(model: nn.Module, x: torch.Tensor, steps: int) -> torch.Tensor:
    logits, caches = model.forward_cached(x)  # prefill: (b, T, vocab)
    for step in range(steps):
        nxt = logits[:, -1, :].argmax(dim=-1, keepdim=True)  # (b, 1)
        x = torch.cat([x, nxt], dim=1)
        if step + 1 < steps:
            logits, caches = model.forward_cached(nxt, caches)
    return x


@torch.no_grad()
def greedy_decode(model: nn.Module, prompts: list[torch.Tensor], steps: int, batch_size: int = 256,
                  use_cache: bool = True) -> list[torch.Tensor]:
    """Extend each 1-D prompt by ``steps`` argmax tokens; returns prompt + completion per input.

    Prompts of equal length are decoded together, so every row sees exactly the
    positions it would see alone: the result equals one-at-a-time decoding. With
    vanilla attention a key/value cache avoids recomputing earlier positions.
    """
    model.eval()
    device = next(model.parameters()).device
    # inputs longer than block_size - 1 were never seen in training (and the
    # synthesizer's score matrix has only block_size - 1 columns), so keep the last block_size - 1
    context = model.get_block_size() - 1
    by_length: dict[int, list[int]] = defaultdict(list)
    for i, p in enumerate(prompts):
        if p.dim() != 1 or len(p) == 0:
            raise ValueError(f"prompt {i} must be a non-empty 1-D tensor, got shape {tuple(p.shape)}")
        by_length[len(p)].append(i)
    out: list[torch.Tensor | None] = [None] * len(prompts)
    for indices in by_length.values():
        for start in range(0, len(indices), batch_size):
            chunk = indices[start:start + batch_size]
            x = torch.stack([prompts[i] for i in chunk]).to(device)  # (b, T)
            cached = use_cache and getattr(model, "supports_kv_cache", lambda: False)() and x.size(1) + steps <= context
            x = _greedy_cached(model, x, steps) if cached else _greedy_plain(model, x, steps, context)
            for row, i in enumerate(chunk):
                out[i] = x[row].cpu()
    return out


def extract_prediction(completion: str) -> str:
    """The text between the first and second MASK of a completion ('' if there is none).

    Line breaks become spaces, so that a predictions file keeps one prediction per line.
    """
    parts = completion.split(MASK_CHAR)
    return parts[1].replace("\r", " ").replace("\n", " ") if len(parts) > 1 else ""


def predict_places(model: nn.Module, vocab: Vocabulary, questions: list[str], batch_size: int = 256) -> list[str]:
    """Greedy answer to each question."""
    prompts = [vocab.encode(q + MASK_CHAR) for q in questions]
    completions = greedy_decode(model, prompts, DECODE_STEPS, batch_size)
    return [extract_prediction(vocab.decode(c)) for c in completions]


def accuracy(predictions: list[str], gold: list[str]) -> tuple[int, int]:
    """(correct, total) by exact string match."""
    if len(predictions) != len(gold):
        raise ValueError(f"{len(predictions)} predictions for {len(gold)} gold places")
    return sum(p == g for p, g in zip(predictions, gold)), len(gold)


def majority_place(train: list[BirthExample]) -> str:
    """The most common place in the training file (ties: first seen)."""
    return Counter(e.place for e in train).most_common(1)[0][0]


def baseline_accuracy(train_path: str | Path, eval_path: str | Path) -> tuple[str, float]:
    """Accuracy of answering the training set's most common place for everyone."""
    place = majority_place(read_birth_places(train_path, require_answers=True))
    gold = [e.place for e in read_birth_places(eval_path, require_answers=True)]
    correct, total = accuracy([place] * len(gold), gold)
    return place, correct / total


def write_predictions(predictions: list[str], path: str | Path) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(p + "\n" for p in predictions), encoding="utf-8")
    return path
