"""How much a pretrained model has memorised: complete each biography up to its birth place.

Finetuning can only surface facts that pretraining stored. This probe asks the
pretrained model directly, in the pretraining text's own form: the biography of a
dev-set person cut just before the first mention of their birth place, decoded
greedily. It takes seconds, so a pretraining config can be judged without a
finetuning run.
"""
from __future__ import annotations

from dataclasses import dataclass

from torch import nn

from course_lib.data_files import BirthExample
from course_lib.gpt.evaluation import greedy_decode
from course_lib.gpt.vocab import Vocabulary


@dataclass(frozen=True)
class PlaceMention:
    """Where a question's answer is first written in the asker's biography."""

    place: str  # the gold answer
    document: str  # their biography (the first wiki.txt line that starts with their name)
    start: int  # character offset of the place in the document

    @property
    def end(self) -> int:
        return self.start + len(self.place)


def place_mentions(documents: list[str], examples: list[BirthExample]) -> list[PlaceMention | None]:
    """Per example, the first mention of its place after the start of its person's biography (None: not written)."""
    found: list[PlaceMention | None] = []
    for example in examples:
        doc = next((d for d in documents if d.startswith(example.name)), "")
        at = doc.find(example.place)
        found.append(PlaceMention(example.place, doc, at) if at > 0 else None)
    return found


def askable_mentions(wiki_text: str, examples: list[BirthExample], block_size: int) -> list[PlaceMention]:
    """The examples' place mentions that a model of this block size sees whole inside its context."""
    mentions = place_mentions(wiki_text.split("\n"), examples)
    return [m for m in mentions if m is not None and m.end <= block_size - 1]


def recall(model: nn.Module, vocab: Vocabulary, mentions: list[PlaceMention], batch_size: int = 256) -> float:
    """Fraction of mentions whose place the model writes next, greedily, after the biography's text before it.

    Mentions whose place ends past the model's context cannot be asked and raise.
    """
    context = model.get_block_size() - 1
    too_long = [m for m in mentions if m.end > context]
    if too_long:
        raise ValueError(f"{len(too_long)} mentions end past the model's {context}-character context; "
                         "filter them first")
    if not mentions:
        raise ValueError("no mentions to probe")
    prompts = [vocab.encode(m.document[:m.start]) for m in mentions]
    steps = max(len(m.place) for m in mentions)
    completions = greedy_decode(model, prompts, steps, batch_size)
    hits = sum(vocab.decode(c[len(p):]).startswith(m.place) for c, p, m in zip(completions, prompts, mentions))
    return hits / len(mentions)
