import pytest
import torch

from course_lib.gpt.model import GPT, GPTConfig


def test_parameter_count_matches_spec():
    """Does the original config with a 256-symbol vocabulary have 3,323,392 parameters?"""
    assert GPT(GPTConfig(256, 128, n_layer=4, n_head=8, n_embd=256)).num_parameters() == 3_323_392


def test_forward_shapes_and_pad_ignored():
    """Are logits (B, T, vocab) and does the loss ignore PAD targets?"""
    torch.manual_seed(0)
    model = GPT(GPTConfig(10, 16, n_layer=1, n_head=2, n_embd=8)).eval()
    x = torch.randint(2, 10, (3, 7))
    y = torch.randint(2, 10, (3, 7))
    logits, loss = model(x, y)
    assert logits.shape == (3, 7, 10)
    y_padded = y.clone()
    y_padded[:, 5:] = 0
    _, loss_padded = model(x, y_padded)
    _, loss_cut = model(x[:, :5], y[:, :5])
    assert torch.allclose(loss_padded, loss_cut, atol=1e-6)
    assert not torch.allclose(loss, loss_padded)


def test_too_long_input_is_a_clear_error():
    """Does a sequence longer than block_size raise a ValueError that says so?"""
    model = GPT(GPTConfig(10, 8, n_layer=1, n_head=2, n_embd=8))
    with pytest.raises(ValueError, match="block_size"):
        model(torch.zeros(1, 9, dtype=torch.long))


@pytest.mark.parametrize("bad", [dict(n_embd=10, n_head=3), dict(attention_impl="flash"), dict(attn_pdrop=1.5),
                                 dict(n_layer=0)])
def test_config_rejects_bad_values(bad):
    """Does GPTConfig refuse impossible settings on construction?"""
    with pytest.raises(ValueError):
        GPTConfig(10, 8, **bad)
