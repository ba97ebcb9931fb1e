"""The two datasets of Part 1: birth-place questions and span-corrupted documents.

``NameDataset`` is given whole. ``CharCorruptionDatasetBase`` holds the given part
of the span-corruption dataset (vocabulary, documents, length); students subclass
it and write ``__getitem__`` in their notebook.
"""
from __future__ import annotations

import torch
from torch.utils.data import Dataset

from course_lib.gpt.vocab import MASK_CHAR, PAD_CHAR, Vocabulary


class CharCorruptionDatasetBase(Dataset):
    """Documents of the pretraining corpus, one per line, and their vocabulary.

    Attributes students use in ``__getitem__``:
      data        list of documents (the corpus split on "\\n")
      block_size  length of x and y is block_size - 1
      stoi, itos  character <-> index maps; MASK_CHAR, PAD_CHAR the special characters
    """

    MASK_CHAR = MASK_CHAR
    PAD_CHAR = PAD_CHAR

    def __init__(self, data: str, block_size: int):
        if block_size < 8:
            raise ValueError(f"block_size must be at least 8 to hold a corrupted example, got {block_size}")
        self.vocab = Vocabulary(data)
        self.stoi, self.itos = self.vocab.stoi, self.vocab.itos
        self.vocab_size = len(self.vocab)
        self.block_size = block_size
        self.data: list[str] = data.split("\n")

    def __len__(self) -> int:
        return len(self.data)

    def __getitem__(self, idx: int) -> tuple[torch.Tensor, torch.Tensor]:
        raise NotImplementedError("write __getitem__ in your notebook's span-corruption cell")


class NameDataset(Dataset):
    """``Where was NAME born?<TAB>PLACE`` lines as (x, y) pairs for finetuning.

    x = question ⁇ place ⁇ padded with □ to block_size, minus its last char;
    y = x shifted left by one, with the positions that would predict the question
    itself set to □ so only ``⁇place⁇`` is learned.
    """

    def __init__(self, pretraining_dataset: CharCorruptionDatasetBase, data: str):
        self.vocab: Vocabulary = pretraining_dataset.vocab
        self.stoi, self.itos = self.vocab.stoi, self.vocab.itos
        self.block_size = pretraining_dataset.block_size
        # non-ASCII characters are dropped, as in the original
        text = data.encode("utf-8").decode("ascii", errors="ignore")
        if not text.endswith("\n"):
            text += "\n"  # so a file without a final newline keeps its last line
        self.data = text.split("\n")

    def __len__(self) -> int:
        return len(self.data) - 1

    def __getitem__(self, idx: int) -> tuple[torch.Tensor, torch.Tensor]:
        line = self.data[idx]
        parts = line.split("\t")
        if len(parts) != 2:
            raise ValueError(f"line {idx + 1} of the finetuning file is not 'question<TAB>place': {line!r}")
        inp, oup = parts
        x = inp + MASK_CHAR + oup + MASK_CHAR
        if len(x) > self.block_size:
            raise ValueError(f"line {idx + 1} is {len(x)} characters with its masks, longer than block_size "
                             f"{self.block_size}")
        x = x + PAD_CHAR * (self.block_size - len(x))
        y = PAD_CHAR * (len(inp) - 1) + x[len(inp):]
        x = x[:-1]
        return self.vocab.encode(x), self.vocab.encode(y)  # (block_size-1,), (block_size-1,)
