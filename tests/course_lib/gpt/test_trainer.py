import math

import pytest
import torch

from course_lib.gpt.model import GPT, GPTConfig
from course_lib.gpt.trainer import Trainer, TrainerConfig, lr_multiplier, optimizer_groups, trim_collate


def test_lr_schedule_values():
    """Does the schedule warm up linearly, follow the cosine, and floor at 10%?"""
    config = TrainerConfig(lr_decay=True, warmup_tokens=10_240, final_tokens=75_212_800)
    assert lr_multiplier(0, config) == 0.0
    assert lr_multiplier(5_120, config) == pytest.approx(0.5)
    assert lr_multiplier(10_240, config) == pytest.approx(1.0)
    middle = 10_240 + (75_212_800 - 10_240) // 2
    assert lr_multiplier(middle, config) == pytest.approx(0.5, abs=1e-6)
    quarter = 10_240 + (75_212_800 - 10_240) // 4
    assert lr_multiplier(quarter, config) == pytest.approx(0.5 * (1 + math.cos(math.pi / 4)), abs=1e-6)
    assert lr_multiplier(75_212_800, config) == pytest.approx(0.1)
    assert lr_multiplier(10**10, config) == pytest.approx(0.1)
    assert lr_multiplier(123, TrainerConfig(lr_decay=False)) == 1.0


def test_seed_weight_decay_rule():
    """Does the original's rule decay every parameter without 'bias' in its name (LayerNorm weights too)?"""
    model = GPT(GPTConfig(10, 8, n_layer=1, n_head=2, n_embd=8))
    decay, no_decay = optimizer_groups(model, TrainerConfig())
    names = {id(p): n for n, p in model.named_parameters()}
    assert "blocks.0.ln1.weight" in {names[id(p)] for p in decay["params"]}
    assert all("bias" in names[id(p)] for p in no_decay["params"])
    decay_m, _ = optimizer_groups(model, TrainerConfig(decay_matrices_only=True))
    assert all(p.dim() >= 2 for p in decay_m["params"])


def test_trim_collate_keeps_loss():
    """Does trimming all-PAD columns leave the loss unchanged?"""
    torch.manual_seed(0)
    model = GPT(GPTConfig(10, 16, n_layer=1, n_head=2, n_embd=8)).eval()
    batch = []
    for n in (5, 9):
        x = torch.zeros(15, dtype=torch.long)
        y = torch.zeros(15, dtype=torch.long)
        x[:n] = torch.randint(2, 10, (n,))
        y[: n - 1] = x[1:n]
        batch.append((x, y))
    x, y, width = trim_collate(batch)
    assert x.shape == (2, 9) and width == 15
    full_x = torch.stack([b[0] for b in batch])
    full_y = torch.stack([b[1] for b in batch])
    assert torch.allclose(model(x, y)[1], model(full_x, full_y)[1], atol=1e-6)


class Memorise(torch.utils.data.Dataset):
    def __len__(self):
        return 16

    def __getitem__(self, idx):
        x = torch.tensor([2 + idx % 4] * 6)
        return x, x


def test_training_lowers_loss_and_records_history():
    """Does a short seeded run lower the loss, count tokens with pads, and fire callbacks?"""
    model = GPT(GPTConfig(8, 8, n_layer=1, n_head=2, n_embd=16, embd_pdrop=0, resid_pdrop=0, attn_pdrop=0))
    config = TrainerConfig(max_epochs=30, batch_size=8, learning_rate=1e-2, lr_decay=True, warmup_tokens=100,
                           final_tokens=3000, seed=0, progress=False)
    trainer = Trainer(model, Memorise(), None, config)
    epochs = []
    trainer.add_callback("on_epoch_end", lambda t: epochs.append(t.epoch))
    history = trainer.train()
    assert len(history) == 60 and epochs == list(range(30))
    assert history[-1]["tokens"] == 60 * 8 * 6
    assert history[-1]["loss"] < 0.5 * history[0]["loss"]


def test_trainer_config_rejects_bad_values():
    """Does TrainerConfig refuse a zero batch size or an inverted schedule?"""
    with pytest.raises(ValueError, match="batch_size"):
        TrainerConfig(batch_size=0)
    with pytest.raises(ValueError, match="warmup_tokens"):
        TrainerConfig(lr_decay=True, warmup_tokens=10, final_tokens=5)


def test_unknown_event_is_refused():
    """Does add_callback name the valid events when given a wrong one?"""
    trainer = Trainer(GPT(GPTConfig(8, 8, n_layer=1, n_head=2, n_embd=8)), Memorise(), None, TrainerConfig())
    with pytest.raises(ValueError, match="on_batch_end"):
        trainer.add_callback("on_step", lambda t: None)


def test_length_buckets_group_similar_lengths():
    """Do bucketed batches hold every example once, grouped by length, each trimmed?"""
    from course_lib.gpt.trainer import bucket_batches

    torch.manual_seed(0)
    batch = []
    for n in [3, 12, 4, 11, 5, 10, 6, 9]:
        x = torch.zeros(15, dtype=torch.long)
        x[:n] = 2
        batch.append((x, x.clone()))
    groups = bucket_batches(batch, batch_size=4, trim=True)
    assert sorted(g[0].size(1) for g in groups) == [6, 12]
    assert sum(g[0].size(0) for g in groups) == 8 and all(g[2] == 15 for g in groups)


def test_short_final_load_keeps_full_batches():
    """Does a load of fewer than n_buckets batches still give batches of batch_size (and one remainder)?"""
    from course_lib.gpt.trainer import bucket_batches

    torch.manual_seed(0)
    batch = [(torch.full((6,), 2), torch.full((6,), 2)) for _ in range(10)]
    assert sorted(g[0].size(0) for g in bucket_batches(batch, batch_size=4, trim=False)) == [2, 4, 4]


def test_callback_can_stop_training():
    """Does setting should_stop in a callback end training after that step?"""
    trainer = Trainer(GPT(GPTConfig(8, 8, n_layer=1, n_head=2, n_embd=8)), Memorise(), None,
                      TrainerConfig(max_epochs=5, batch_size=4, progress=False))

    def stop_at_three(t):
        t.should_stop = t.step >= 3

    trainer.add_callback("on_batch_end", stop_at_three)
    assert len(trainer.train()) == 3


def test_bf16_autocast_follows_the_float32_run():
    """Does a seeded run under bf16 autocast see nearly the losses of the same run in float32?"""
    losses = {}
    for bf16 in (False, True):
        torch.manual_seed(0)
        model = GPT(GPTConfig(8, 8, n_layer=1, n_head=2, n_embd=16, embd_pdrop=0, resid_pdrop=0, attn_pdrop=0))
        config = TrainerConfig(max_epochs=10, batch_size=8, learning_rate=1e-2, seed=0, progress=False,
                               autocast_bf16=bf16)
        losses[bf16] = [h["loss"] for h in Trainer(model, Memorise(), None, config).train()]
    assert losses[True][-1] < 0.5 * losses[True][0]  # it trains
    # bfloat16 keeps 8 bits of mantissa: close (under 0.5% here), not the same numbers
    assert losses[True] != losses[False]
    assert max(abs(a / b - 1) for a, b in zip(losses[True], losses[False])) < 0.02


def test_fused_adamw_on_the_cpu_follows_the_loop():
    """Does a seeded CPU run with fused AdamW reach the same weights as torch's default AdamW, to float error?"""
    from unittest import mock

    weights = {}
    for fused in (False, True):
        torch.manual_seed(0)
        model = GPT(GPTConfig(8, 8, n_layer=1, n_head=2, n_embd=16))
        before = torch.cat([p.detach().flatten() for p in model.parameters()])
        config = TrainerConfig(max_epochs=3, batch_size=8, learning_rate=1e-2, seed=0, progress=False,
                               device="cpu", fused_adamw=fused)
        with mock.patch.object(torch.optim, "AdamW", wraps=torch.optim.AdamW) as adamw:
            Trainer(model, Memorise(), None, config).train()
        assert adamw.call_args.kwargs.get("fused", False) is fused
        weights[fused] = torch.cat([p.detach().flatten() for p in model.parameters()])
        assert (weights[fused] - before).abs().max() > 1e-2  # the runs trained
    assert torch.allclose(weights[True], weights[False], atol=1e-5)


def test_on_train_start_sees_the_optimizer_and_may_move_the_start_epoch():
    """Does on_train_start fire once the optimizer exists, and does training start at the epoch a callback sets
    there (as a restored checkpoint does)?"""
    trainer = Trainer(GPT(GPTConfig(8, 8, n_layer=1, n_head=2, n_embd=8)), Memorise(), None,
                      TrainerConfig(max_epochs=5, batch_size=4, progress=False, num_threads=1))
    seen = []

    def start_at_three(t):
        seen.append(t.optimizer)
        t.start_epoch = 3

    trainer.add_callback("on_train_start", start_at_three)
    history = trainer.train()
    assert seen == [trainer.optimizer] and seen[0] is not None
    assert [h["epoch"] for h in history] == [3] * 4 + [4] * 4
