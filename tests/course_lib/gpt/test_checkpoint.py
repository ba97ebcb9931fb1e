import pytest
import torch

from course_lib.gpt.checkpoint import CheckpointError, load_params, save_params
from course_lib.gpt.model import GPT, GPTConfig


def test_round_trip(tmp_path):
    """Does a saved model load back into a fresh model with identical outputs?"""
    torch.manual_seed(0)
    config = GPTConfig(12, 8, n_layer=1, n_head=2, n_embd=8)
    model = GPT(config).eval()
    path = save_params(model, tmp_path / "m.params")
    other = load_params(GPT(config).eval(), path)
    x = torch.randint(0, 12, (2, 8))
    assert torch.equal(model(x)[0], other(x)[0])
    assert all(t.device.type == "cpu" for t in torch.load(path, weights_only=True).values())


def test_missing_truncated_and_mismatched_files(tmp_path):
    """Do a missing, a truncated and a wrong-shaped params file each raise a CheckpointError that says which?"""
    model = GPT(GPTConfig(12, 8, n_layer=1, n_head=2, n_embd=8))
    with pytest.raises(CheckpointError, match="not found"):
        load_params(model, tmp_path / "nope.params")
    path = save_params(model, tmp_path / "m.params")
    (tmp_path / "cut.params").write_bytes(path.read_bytes()[:100])
    with pytest.raises(CheckpointError, match="could not read"):
        load_params(model, tmp_path / "cut.params")
    bigger = save_params(GPT(GPTConfig(12, 8, n_layer=2, n_head=2, n_embd=8)), tmp_path / "big.params")
    with pytest.raises(CheckpointError, match="do not fit"):
        load_params(model, bigger)
