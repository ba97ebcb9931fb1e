"""The tour notebook's material: a short text and a next-character dataset over it."""
from __future__ import annotations

import torch
from torch.utils.data import Dataset

from course_lib.gpt.vocab import Vocabulary

TOUR_TEXT = """\
A language model reads text one symbol at a time and guesses the next one.
This one reads characters. It sees a window of the text, and at every position
it scores each character of its alphabet as the possible next character.
Training nudges the scores so that the character that really came next gets a
higher score than before. Nothing else is asked of it.

Attention is how a position looks back at earlier positions. Each position
makes a query, a key and a value. A query is compared with every earlier key;
the better the match, the more of that position's value is mixed into the
output. A mask hides the future, so the model can never peek at the character
it is about to predict.

Stack a few of these layers, each with a small feed-forward network after the
attention, and the model starts to write words, then phrases, then lines that
look like the text it was trained on. It does not know what the words mean.
It knows which characters tend to follow which, over a window of a hundred or
so characters, and that is already enough to surprise.

Pretraining is reading a great deal of text this way before being asked to do
anything useful. Finetuning is the short lesson afterwards that turns a reader
into a question answerer. Whatever the model picked up while reading is the
only knowledge it can bring to the questions.
"""


class CharLMDataset(Dataset):
    """Every window of ``block_size + 1`` characters as (x, y) next-character pairs."""

    def __init__(self, text: str, block_size: int):
        if len(text) <= block_size:
            raise ValueError(f"the text ({len(text)} characters) must be longer than block_size ({block_size})")
        self.vocab = Vocabulary(text)
        self.block_size = block_size
        self.ids = self.vocab.encode(text)  # (N,)

    def __len__(self) -> int:
        return len(self.ids) - self.block_size

    def __getitem__(self, idx: int) -> tuple[torch.Tensor, torch.Tensor]:
        chunk = self.ids[idx: idx + self.block_size + 1]
        return chunk[:-1], chunk[1:]
