import pytest
import torch
from torch import nn

from course_lib.data_files import BirthExample
from course_lib.gpt.recall import askable_mentions, place_mentions, recall
from course_lib.gpt.vocab import Vocabulary

DOCS = [
    "Ada Lovelace. Ada Lovelace was an English writer born in London in 1815.",
    "Alan Turing. Alan Turing was a mathematician born in Maida Vale, London.",
]
EXAMPLES = [
    BirthExample("Where was Ada Lovelace born?", "London"),
    BirthExample("Where was Alan Turing born?", "Wilmslow"),  # not written in the biography
    BirthExample("Where was Grace Hopper born?", "New York"),  # no biography
]


class Oracle(nn.Module):
    """Predicts the next character of whichever document the input is a prefix of (PAD if none)."""

    def __init__(self, vocab: Vocabulary, documents: list[str], block_size: int = 128):
        super().__init__()
        self.vocab, self.block_size = vocab, block_size
        self.documents = [vocab.encode(d) for d in documents]
        self.anchor = nn.Parameter(torch.zeros(1))  # decoding reads the device off a parameter

    def get_block_size(self) -> int:
        return self.block_size

    def forward(self, x, targets=None):
        logits = torch.zeros(x.size(0), x.size(1), len(self.vocab))  # (b, T, vocab)
        for row in range(x.size(0)):
            for doc in self.documents:
                t = x.size(1)
                if t < len(doc) and torch.equal(doc[:t], x[row]):
                    logits[row, -1, doc[t]] = 1.0
        return logits, None


def test_mentions_point_at_the_first_place_in_the_persons_biography():
    """Is each answer found where it is first written in its person's biography, and None when not written?"""
    mentions = place_mentions(DOCS, EXAMPLES)
    assert mentions[1] is None and mentions[2] is None
    first = mentions[0]
    assert first.document == DOCS[0] and first.document[first.start:first.end] == "London"
    assert first.start == DOCS[0].index("London")


def test_a_model_that_memorised_the_biographies_recalls_every_place():
    """Does a model that completes the biographies exactly score 1, and one that learnt other text score 0?"""
    vocab = Vocabulary("\n".join(DOCS) + "Paris")
    mentions = [m for m in place_mentions(DOCS, EXAMPLES) if m is not None]
    assert recall(Oracle(vocab, DOCS), vocab, mentions) == 1.0
    wrong = [DOCS[0].replace("London", "Paris"), DOCS[1]]
    assert recall(Oracle(vocab, wrong), vocab, mentions) == 0.0


def test_places_past_the_context_are_refused():
    """Does asking about a place that ends past the model's context raise a clear error?"""
    vocab = Vocabulary("\n".join(DOCS))
    mentions = [m for m in place_mentions(DOCS, EXAMPLES) if m is not None]
    with pytest.raises(ValueError, match="context"):
        recall(Oracle(vocab, DOCS, block_size=20), vocab, mentions)


def test_askable_mentions_keep_written_places_inside_the_context():
    """Are only written places that end inside the context (block_size - 1 characters) kept?"""
    wiki = "\n".join(DOCS)
    london_end = DOCS[0].find("London") + len("London")
    assert [m.place for m in askable_mentions(wiki, EXAMPLES, london_end + 1)] == ["London"]
    assert askable_mentions(wiki, EXAMPLES, london_end) == []
