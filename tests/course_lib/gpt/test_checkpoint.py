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


class Corrupting(torch.utils.data.Dataset):
    """Examples drawn with Python's random module, as span corruption draws them."""

    def __len__(self):
        return 20

    def __getitem__(self, idx):
        import random

        x = torch.zeros(8, dtype=torch.long)
        x[:random.randint(3, 7)] = 2 + idx % 5
        return x, x


class Interrupted(Exception):
    pass


def _trainer(epochs: int = 6):
    from course_lib.gpt.trainer import Trainer, TrainerConfig

    torch.manual_seed(1)
    model = GPT(GPTConfig(8, 8, n_layer=1, n_head=2, n_embd=16))  # dropout on: it draws from torch's generator
    config = TrainerConfig(max_epochs=epochs, batch_size=4, learning_rate=1e-2, lr_decay=True, warmup_tokens=10,
                           final_tokens=900, seed=3, progress=False, shuffle=True, num_threads=1)
    return Trainer(model, Corrupting(), None, config)


def _weights(trainer) -> torch.Tensor:
    return torch.cat([p.detach().flatten() for p in trainer.model.parameters()])


def test_a_resumed_run_reaches_the_uninterrupted_runs_params(tmp_path):
    """Does a run stopped after an epoch and trained again with the same checkpoint file resume there (its counters,
    history and random generators as they were) and reach exactly the params of a run never stopped?"""
    from course_lib.gpt.checkpoint import TrainingCheckpoints

    whole = _trainer()
    whole.train()
    stopped, said = _trainer(), []
    TrainingCheckpoints(tmp_path / "run.pt", "this run", seconds=0, say=said.append).attach(stopped)

    def interrupt(trainer):
        if trainer.epoch == 2:
            raise Interrupted

    stopped.add_callback("on_epoch_end", interrupt)
    with pytest.raises(Interrupted):
        stopped.train()
    resumed = _trainer()
    TrainingCheckpoints(tmp_path / "run.pt", "this run", seconds=0, say=said.append).attach(resumed)
    history = resumed.train()
    assert said and said[-1].startswith("resuming at step 15 from run.pt")
    assert [h["step"] for h in history] == list(range(1, 31))
    assert torch.equal(_weights(resumed), _weights(whole))
    assert [h["loss"] for h in history] == [h["loss"] for h in whole.history]


def test_a_checkpoint_of_other_settings_or_cut_short_is_not_resumed(tmp_path):
    """Does training start over, saying why, from a checkpoint another run saved or one cut short, and remove it?"""
    from course_lib.gpt.checkpoint import TrainingCheckpoints

    trainer = _trainer(epochs=1)
    TrainingCheckpoints(tmp_path / "run.pt", "one run", seconds=0).attach(trainer)
    trainer.train()
    said = []
    other = _trainer(epochs=1)
    TrainingCheckpoints(tmp_path / "run.pt", "another run", seconds=3600, say=said.append).attach(other)
    assert len(other.train()) == 5 and "saved by other code, data or settings: starting over" in said[0]
    assert not (tmp_path / "run.pt").exists()
    (tmp_path / "run.pt").write_bytes(b"PK\3\4 cut short")
    assert TrainingCheckpoints(tmp_path / "run.pt", "one run", say=said.append).read() is None
    assert "unreadable" in said[-1] and not (tmp_path / "run.pt").exists()
