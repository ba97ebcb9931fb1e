import torch

from course_lib.gpt.model import GPT, GPTConfig
from course_lib.gpt.sampling import sample
from course_lib.notebook.tour import TOUR_TEXT, CharLMDataset


def test_tour_dataset_windows():
    """Is each tour example a window with y shifted by one character?"""
    data = CharLMDataset(TOUR_TEXT, 32)
    x, y = data[5]
    assert data.vocab.decode(x) == TOUR_TEXT[5:37] and data.vocab.decode(y) == TOUR_TEXT[6:38]


def test_sampling_is_seeded_and_greedy_is_deterministic():
    """Does sampling repeat with the same generator seed and greedy ignore it?"""
    torch.manual_seed(0)
    model = GPT(GPTConfig(10, 16, n_layer=1, n_head=2, n_embd=8))
    start = torch.zeros(1, 1, dtype=torch.long)
    a = sample(model, start, 12, generator=torch.Generator().manual_seed(3))
    b = sample(model, start, 12, generator=torch.Generator().manual_seed(3))
    assert torch.equal(a, b) and a.shape == (1, 13)
    assert torch.equal(sample(model, start, 5, greedy=True), sample(model, start, 5, greedy=True))
