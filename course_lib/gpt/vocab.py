"""The character vocabulary shared by pretraining and finetuning.

Index 0 is PAD, index 1 is MASK, then the sorted distinct characters of the
pretraining text (SPEC Part 1, "Vocabulary").
"""
from __future__ import annotations

from collections.abc import Iterable

import torch

PAD_CHAR = "\u25a1"  # □, index 0; the loss ignores it
MASK_CHAR = "\u2047"  # ⁇, index 1; separates the parts of an example


class UnknownCharacterError(KeyError):
    """A character that is not in the pretraining vocabulary."""

    def __str__(self) -> str:  # KeyError quotes its message; keep it readable
        return self.args[0]


class Vocabulary:
    """Maps characters to indices and back."""

    def __init__(self, text: str):
        if PAD_CHAR in text or MASK_CHAR in text:
            raise ValueError("the pretraining text must not contain the special characters "
                             f"{PAD_CHAR!r} or {MASK_CHAR!r}")
        chars = [PAD_CHAR, MASK_CHAR] + sorted(set(text))
        self.itos: dict[int, str] = dict(enumerate(chars))
        self.stoi: dict[str, int] = {ch: i for i, ch in self.itos.items()}

    def __len__(self) -> int:
        return len(self.itos)

    def encode(self, text: Iterable[str]) -> torch.Tensor:
        """Characters -> LongTensor of indices; unknown characters raise UnknownCharacterError."""
        try:
            return torch.tensor([self.stoi[c] for c in text], dtype=torch.long)
        except KeyError as err:
            text = "".join(text)
            raise UnknownCharacterError(
                f"character {err.args[0]!r} in {text[:60]!r} is not in the pretraining vocabulary "
                f"({len(self)} symbols); the finetuning text may only use characters that appear in wiki.txt"
            ) from None

    def decode(self, indices: Iterable[int]) -> str:
        if isinstance(indices, torch.Tensor) and indices.dim() == 1:
            indices = indices.tolist()  # one conversion: iterating a tensor makes a tensor per element
        return "".join(self.itos[int(i)] for i in indices)
