import pytest
import torch

from course_lib.gpt.attention import CausalSelfAttention, SynthesizerAttentionBase
from course_lib.gpt.model import GPT, GPTConfig


@pytest.mark.parametrize("B,T,C,H", [(2, 7, 16, 4), (3, 31, 32, 8), (1, 1, 8, 2)])
def test_sdpa_and_manual_agree(B, T, C, H):
    """Do the fused and the readable attention paths give the same output to 1e-5?"""
    torch.manual_seed(0)
    config = GPTConfig(10, 32, n_head=H, n_embd=C)
    fast = CausalSelfAttention(config).eval()
    slow = CausalSelfAttention(GPTConfig(10, 32, n_head=H, n_embd=C, attention_impl="manual")).eval()
    slow.load_state_dict(fast.state_dict())
    x = torch.randn(B, T, C)
    assert torch.allclose(fast(x), slow(x), atol=1e-5)


def test_the_fused_projection_trains_query_key_and_value_as_the_readable_path():
    """Do the fused q/k/v projection and the three readable ones give the same gradient to every parameter?"""
    torch.manual_seed(0)
    fast = CausalSelfAttention(GPTConfig(10, 32, n_head=4, n_embd=16)).eval()
    slow = CausalSelfAttention(GPTConfig(10, 32, n_head=4, n_embd=16, attention_impl="manual")).eval()
    slow.load_state_dict(fast.state_dict())
    x = torch.randn(3, 9, 16)
    g = torch.randn(3, 9, 16)
    fast(x).backward(g)
    slow(x).backward(g)
    grads = {name: p.grad for name, p in slow.named_parameters()}
    for name, p in fast.named_parameters():
        assert p.grad is not None and torch.allclose(p.grad, grads[name], atol=1e-5), name


def test_vanilla_attention_is_causal():
    """Does changing position t+1 leave outputs up to t unchanged?"""
    torch.manual_seed(0)
    layer = CausalSelfAttention(GPTConfig(10, 16, n_head=2, n_embd=8)).eval()
    x = torch.randn(2, 10, 8)
    x2 = x.clone()
    x2[:, 6:] += 1.0
    assert torch.allclose(layer(x)[:, :6], layer(x2)[:, :6], atol=1e-6)


def test_wrong_width_is_a_clear_error():
    """Does attention say which shape it expected when given the wrong width?"""
    layer = CausalSelfAttention(GPTConfig(10, 16, n_head=2, n_embd=8))
    with pytest.raises(ValueError, match=r"\(B, T, 8\)"):
        layer(torch.randn(2, 3, 6))


def test_synthesizer_base_parameters_and_placeholder():
    """Does the given synthesizer hold the SPEC's parameter shapes, and refuse to run until written?"""
    layer = SynthesizerAttentionBase(GPTConfig(10, 8, n_head=3, n_embd=6))
    assert layer.w2.shape == (2, 7) and layer.b2.shape == (7,)
    assert layer.w2.abs().max() <= 0.001 and layer.w2.abs().max() > 0
    with pytest.raises(NotImplementedError):
        layer(torch.randn(1, 3, 6))


def test_reference_synthesizer_is_causal(reference):
    """Does the reference synthesizer leave outputs up to t unchanged when input t+1 changes?"""
    torch.manual_seed(0)
    layer = reference.SynthesizerAttention(GPTConfig(10, 8, n_head=3, n_embd=6)).eval()
    torch.nn.init.normal_(layer.w2)  # larger weights so a leak would show
    x = torch.randn(11, 7, 6)
    for t in range(6):
        x2 = x.clone()
        x2[:, t + 1:] = torch.randn_like(x2[:, t + 1:])
        assert torch.allclose(layer(x)[:, : t + 1], layer(x2)[:, : t + 1], atol=1e-6)


def test_reference_synthesizer_matches_the_equation(reference):
    """Does the reference compute softmax(ReLU(XA+b1)B+b2)(XV) per head, masked, on the SPEC's grader shapes?"""
    torch.manual_seed(1)
    layer = reference.SynthesizerAttention(GPTConfig(10, 8, n_head=3, n_embd=6)).eval()
    x = torch.randn(11, 7, 6)
    T, nh = 7, 3
    heads = []
    for i in range(nh):
        cols = slice(i * 2, (i + 1) * 2)
        a = torch.relu(x @ layer.w1.weight[cols].T + layer.w1.bias[cols])  # (B, T, hs)
        scores = a @ layer.w2[:, :T] + layer.b2[:T]  # (B, T, T)
        scores = scores.masked_fill(torch.triu(torch.ones(T, T, dtype=torch.bool), 1), float("-inf"))
        v = x @ layer.value.weight[cols].T + layer.value.bias[cols]
        heads.append(torch.softmax(scores, -1) @ v)
    expected = layer.proj(torch.cat(heads, dim=-1))
    assert (layer(x) - expected).norm() < 1e-5


def test_gpt_takes_another_attention_class(reference):
    """Can a GPT be built with the student's synthesizer in every block?"""
    model = GPT(GPTConfig(20, 16, n_layer=2, n_head=2, n_embd=8), attention_class=reference.SynthesizerAttention)
    assert all(isinstance(b.attn, reference.SynthesizerAttention) for b in model.blocks)
    logits, _ = model(torch.zeros(2, 15, dtype=torch.long))
    assert logits.shape == (2, 15, 20)


def test_cpu_dropout_attention_matches_the_manual_formula():
    """Does causal_attention_dropout equal softmax(QK^T/sqrt(hs), causal), the same mask, /(1-p), times V, with equal
    gradients?"""
    import math

    from course_lib.gpt.attention import causal_attention_dropout
    from course_lib.gpt.dropout import drop_mask

    B, nh, T, hs, p = 2, 3, 9, 4, 0.25
    torch.manual_seed(0)
    q, k, v = (torch.randn(B, nh, T, hs, requires_grad=True) for _ in range(3))
    allowed = torch.tril(torch.ones(16, 16))
    bias = torch.zeros(16, 16).masked_fill(allowed == 0, float("-inf"))
    torch.manual_seed(7)
    fast = causal_attention_dropout(q, k, v, p, bias)
    torch.manual_seed(7)
    drop = drop_mask((B * nh, T, T), p).view(B, nh, T, T)  # the same draw the function makes
    att = (q @ k.transpose(-2, -1)) / math.sqrt(hs)
    att = torch.softmax(att.masked_fill(allowed[:T, :T] == 0, float("-inf")), dim=-1)
    slow = att.masked_fill(drop, 0.0) / (1 - p) @ v
    assert torch.allclose(fast, slow, atol=1e-5)
    g = torch.randn_like(fast)
    fast_grads = torch.autograd.grad(fast, (q, k, v), g)
    slow_grads = torch.autograd.grad(slow, (q, k, v), g)
    assert all(torch.allclose(a, b, atol=1e-5) for a, b in zip(fast_grads, slow_grads))


def test_fast_dropout_attention_takes_the_cpu_path_only_when_dropping():
    """Does a fast_dropout layer use the CPU dropout path in training and plain SDPA in eval?"""
    from unittest import mock

    import course_lib.gpt.attention as attention

    torch.manual_seed(0)
    layer = CausalSelfAttention(GPTConfig(10, 16, n_head=2, n_embd=8, fast_dropout=True))
    x = torch.randn(2, 5, 8)
    with mock.patch.object(attention, "causal_attention_dropout", wraps=attention.causal_attention_dropout) as spy:
        layer.train()(x)
        assert spy.call_count == 1
        layer.eval()(x)
        assert spy.call_count == 1


def test_bf16_attention_on_the_cpu_skips_sdpa_and_agrees_with_float32():
    """Under bf16 autocast on the CPU, does attention without dropout skip SDPA and agree with float32?"""
    from unittest import mock

    import course_lib.gpt.attention as attention

    torch.manual_seed(0)
    layer = CausalSelfAttention(GPTConfig(10, 16, n_head=2, n_embd=8, attn_pdrop=0.0, resid_pdrop=0.0))
    x = torch.randn(2, 5, 8)
    exact = layer(x)
    with mock.patch.object(attention.F, "scaled_dot_product_attention", side_effect=AssertionError("SDPA called")):
        with torch.autocast("cpu", dtype=torch.bfloat16):
            mixed = layer(x)
            mixed_eval = layer.eval()(x)
    assert mixed.dtype == torch.bfloat16
    assert torch.allclose(mixed.float(), exact, atol=2e-2) and torch.equal(mixed, mixed_eval)
    assert torch.allclose(layer(x), exact, atol=1e-6)  # float32 keeps SDPA


def test_bf16_attention_dropout_on_the_cpu_skips_sdpa_and_drops_as_the_manual_path():
    """Under CPU bf16 autocast, does attention with torch's dropout skip SDPA and drop as the manual path does?"""
    from unittest import mock

    import course_lib.gpt.attention as attention

    config = dict(n_head=2, n_embd=8, attn_pdrop=0.5, resid_pdrop=0.0)
    torch.manual_seed(0)
    fast = CausalSelfAttention(GPTConfig(10, 16, **config))
    manual = CausalSelfAttention(GPTConfig(10, 16, attention_impl="manual", **config))
    manual.load_state_dict(fast.state_dict())
    x = torch.randn(2, 5, 8)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        torch.manual_seed(1)
        expected = manual(x)
        with mock.patch.object(attention.F, "scaled_dot_product_attention", side_effect=AssertionError("SDPA called")):
            torch.manual_seed(1)
            got = fast(x)
        torch.manual_seed(1)
        undropped = fast.eval()(x)
    assert got.dtype == torch.bfloat16
    assert torch.allclose(got.float(), expected.float(), atol=2e-2)  # the same mask from the same seed
    assert not torch.allclose(got.float(), undropped.float(), atol=2e-2)  # and a mask was drawn
