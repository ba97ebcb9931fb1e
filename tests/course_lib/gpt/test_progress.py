"""Tests for course_lib/gpt/progress.py: the progress bar, the run's log file and its measured rate."""
from __future__ import annotations

from types import SimpleNamespace

from course_lib.gpt import progress
from course_lib.gpt.progress import ProgressLog, clock, duration


def test_durations_read_roughly():
    """Are estimates rounded the way a person says them, and times left shown as a clock?"""
    assert [duration(s) for s in (4.2, 59, 232.5, 89 * 60, 2.6 * 3600)] == \
        ["under a minute", "under a minute", "about 4 min", "about 89 min", "about 2.6 hours"]
    assert [clock(s) for s in (0.4, 42, 725, 3729)] == ["0:00", "0:42", "12:05", "1:02:09"]


def _trainer(step: int = 0):
    config = SimpleNamespace(batch_size=10, max_epochs=30, max_steps=None)
    return SimpleNamespace(config=config, train_dataset=range(100), step=step, epoch=0, loss=1.5, device="cpu")


def test_the_log_gets_a_line_every_few_seconds_and_the_measured_rate_once(tmp_path, monkeypatch):
    """Does the run's log get its start, the rate measured after its first seconds (printed too: it replaces the
    first guess), a line with the time left every few seconds, and its end?"""
    now = [100.0]
    monkeypatch.setattr(progress.time, "monotonic", lambda: now[0])
    printed = []
    log = ProgressLog(tmp_path / "run.log", "vanilla_pretrain", seconds=10, measure_seconds=5, out=printed.append)
    trainer = _trainer()
    log.start(trainer)
    for step in range(1, 301):  # 300 steps, 20 a second after the first
        trainer.step, now[0] = step, 100.0 + step / 20
        log(trainer)
    log.finish(trainer)
    lines = [line.split(" ", 2)[2] for line in (tmp_path / "run.log").read_text().splitlines()]
    assert lines[0] == "vanilla_pretrain: training on cpu: 300 steps"
    assert lines[1] == "vanilla_pretrain: measured on this machine: 20.0 steps/s, so 300 steps take under a minute; " \
                       "0:10 left"
    assert printed == [lines[1]]
    assert lines[2].startswith("vanilla_pretrain: step 201/300 epoch 1 loss 1.5000, 0:10 in, 0:05 left (20.0 steps/s)")
    assert lines[-1].startswith("vanilla_pretrain: trained to step 300 of 300")


def test_a_resumed_run_says_where_it_resumes(tmp_path):
    """Does a resumed run's log say the step it resumes at, of how many, and echo its lines when asked?"""
    printed = []
    log = ProgressLog(tmp_path / "run.log", "run", echo=True, out=printed.append)
    log.start(_trainer(step=120))
    assert printed == ["run: training on cpu: resuming at step 120 of 300"]
