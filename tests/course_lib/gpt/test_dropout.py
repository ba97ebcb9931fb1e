import pytest
import torch

from course_lib.gpt.dropout import FastDropout, drop_mask, fast_dropout, make_dropout
from course_lib.gpt.model import GPT, GPTConfig


@pytest.mark.parametrize("p", [0.1, 0.5, 0.02])
def test_drop_rate_is_p(p):
    """Does a mask drop close to a fraction p of a million elements?"""
    torch.manual_seed(0)
    rate = drop_mask((1000, 1000), p).float().mean().item()
    assert abs(rate - p) < 0.002  # four standard deviations at p = 0.5 (0.0005), more below


def test_zero_rate_drops_nothing():
    """Does p = 0 keep every element, in the mask and in the functional form?"""
    x = torch.randn(3, 5)
    assert not drop_mask((100, 100), 0.0).any()
    assert fast_dropout(x, 0.0) is x


def test_the_four_numbers_of_a_draw_are_independent():
    """Do the four 16-bit numbers cut from one 64-bit draw drop together only about p^2 of the time?"""
    torch.manual_seed(1)
    words = drop_mask((250_000, 4), 0.1).float()  # one row per 64-bit draw
    for i in range(4):
        for j in range(i + 1, 4):
            both = (words[:, i] * words[:, j]).mean().item()
            assert abs(both - 0.01) < 0.0015


def test_survivors_are_scaled_and_gradients_follow_the_mask():
    """Are kept elements multiplied by 1/(1-p), dropped ones zero, and is the gradient the same mask times the scale?"""
    torch.manual_seed(2)
    x = torch.ones(200, 300, requires_grad=True)
    out = fast_dropout(x, 0.2)
    kept = out != 0
    assert torch.allclose(out[kept], torch.full_like(out[kept], 1.25))
    out.sum().backward()
    assert torch.equal(x.grad, kept.float() * 1.25)


def test_bfloat16_survivors_are_scaled_at_full_precision():
    """In bfloat16, is each survivor x / (1 - p) rounded once (not x times a rounded 1 / (1 - p)), and dropped ones
    zero?"""
    torch.manual_seed(4)
    x = torch.randn(300, 400).to(torch.bfloat16)
    out = fast_dropout(x, 0.1)
    assert out.dtype == torch.bfloat16
    kept = out != 0
    assert 0.09 < 1 - kept.float().mean().item() < 0.11
    assert torch.equal(out[kept], (x[kept].float() * (1 / 0.9)).to(torch.bfloat16))


def test_seeded_masks_repeat():
    """Does torch.manual_seed make the masks repeat?"""
    torch.manual_seed(3)
    a = drop_mask((64, 64), 0.1)
    torch.manual_seed(3)
    assert torch.equal(a, drop_mask((64, 64), 0.1))


def test_module_is_inert_in_eval():
    """Does FastDropout pass its input through untouched in eval mode, like nn.Dropout?"""
    layer = make_dropout(0.3, fast=True).eval()
    x = torch.randn(4, 4)
    assert isinstance(layer, FastDropout) and layer(x) is x
    assert type(make_dropout(0.3, fast=False)) is torch.nn.Dropout


def test_switch_leaves_evaluation_unchanged():
    """Does a model with fast_dropout give the same logits in eval as one without, from the same weights?"""
    torch.manual_seed(0)
    plain = GPT(GPTConfig(20, 16, n_layer=2, n_head=2, n_embd=16)).eval()
    fast = GPT(GPTConfig(20, 16, n_layer=2, n_head=2, n_embd=16, fast_dropout=True)).eval()
    fast.load_state_dict(plain.state_dict())
    idx = torch.randint(1, 20, (3, 16))
    assert torch.allclose(plain(idx)[0], fast(idx)[0], atol=1e-5)


def test_training_with_the_switch_drops():
    """Does a fast_dropout model in training mode give different logits from eval, and finite gradients?"""
    torch.manual_seed(0)
    model = GPT(GPTConfig(20, 16, n_layer=1, n_head=2, n_embd=16, fast_dropout=True))
    idx = torch.randint(1, 20, (3, 16))
    train_logits, loss = model(idx, idx)
    loss.backward()
    assert not torch.allclose(train_logits, model.eval()(idx)[0])
    assert all(torch.isfinite(p.grad).all() for p in model.parameters() if p.grad is not None)
