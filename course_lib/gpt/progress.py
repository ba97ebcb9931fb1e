"""A training run's progress: a tqdm bar in the notebook, a log file with a line every few seconds, and the run's
own measured rate, which replaces the estimate it started from.

Both attach to a Trainer's named events, so the training itself knows nothing of them.
"""
from __future__ import annotations

import math
import sys
import time
from collections import deque
from collections.abc import Callable
from datetime import datetime
from pathlib import Path


def duration(seconds: float) -> str:
    """A rough duration for an estimate: "under a minute", "about 6 min", "about 2.5 hours"."""
    if seconds < 60:
        return "under a minute"
    if seconds < 90 * 60:
        return f"about {round(seconds / 60)} min"
    return f"about {seconds / 3600:.1f} hours"


def clock(seconds: float) -> str:
    """Elapsed or remaining time as a clock: "0:42", "12:05", "1:02:09"."""
    seconds = max(0, round(seconds))
    hours, rest = divmod(seconds, 3600)
    return (f"{hours}:" if hours else "") + (f"{rest // 60:02d}" if hours else f"{rest // 60}") + f":{rest % 60:02d}"


def total_steps(trainer) -> int:
    """Steps of the whole run: batches per epoch times epochs, or max_steps when that comes first."""
    config = trainer.config
    total = math.ceil(len(trainer.train_dataset) / config.batch_size) * config.max_epochs  # buckets make as many
    return total if config.max_steps is None else min(total, config.max_steps)


class ProgressBar:
    """tqdm bar over all steps of a train() call, showing epoch, loss and learning rate; a resumed run's bar starts
    where the run stood."""

    def __init__(self) -> None:
        self.bar = None

    def __call__(self, trainer) -> None:
        from tqdm.auto import tqdm

        if self.bar is None:
            self.bar = tqdm(total=total_steps(trainer), initial=trainer.step - 1, desc="train", unit="step",
                            mininterval=1.0)
        self.bar.update(1)
        self.bar.set_postfix_str(f"epoch {trainer.epoch + 1} loss {trainer.loss:.4f} lr {trainer.lr:.2e}",
                                 refresh=False)

    def close(self, trainer=None) -> None:
        if self.bar is not None:
            self.bar.close()
            self.bar = None


class ProgressLog:
    """The run's log file: a line every ``seconds`` (step, epoch, loss, time so far and left); once the run has
    trained ``measure_seconds``, its measured rate and the time that makes, also printed (the plan printed before
    training was a first guess). ``echo`` prints every line too (a run nobody watches in a notebook)."""

    def __init__(self, path: str | Path, name: str, seconds: float = 10.0, measure_seconds: float = 5.0,
                 echo: bool = False, out: Callable[[str], None] | None = None):
        self.path = Path(path)
        self.name = name
        self.seconds = seconds
        self.measure_seconds = measure_seconds
        self.echo = echo
        self.out = out or (lambda line: print(line, flush=True))
        self.total = 0
        self.started = 0.0  # when this session's first step ended
        self.first_step = 0  # the step it ended on
        self.next_line = 0.0
        self.measured = False
        self.recent: deque[tuple[float, int]] = deque()  # (time, step) over the last minute: the rate of "left"

    def attach(self, trainer) -> None:
        trainer.add_callback("on_train_start", self.start)
        trainer.add_callback("on_batch_end", self)
        trainer.add_callback("on_train_end", self.finish)

    def note(self, text: str, show: bool = False) -> None:
        """One line in the log, printed too when ``show`` or echoing."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self.path.open("a", encoding="utf-8") as log:
            log.write(f"{datetime.now():%Y-%m-%d %H:%M:%S} {self.name}: {text}\n")
        if self.echo or show:
            self.out(f"{self.name}: {text}")

    def start(self, trainer) -> None:
        self.total = total_steps(trainer)
        self.started = 0.0
        self.measured = False
        where = f"resuming at step {trainer.step:,} of {self.total:,}" if trainer.step else f"{self.total:,} steps"
        self.note(f"training on {trainer.device}: {where}")

    def rate(self, now: float, step: int) -> float | None:
        """Steps per second over the last minute (since the session's first step at most)."""
        self.recent.append((now, step))
        while len(self.recent) > 2 and now - self.recent[1][0] > 60:
            self.recent.popleft()
        then, before = self.recent[0]
        return (step - before) / (now - then) if now > then and step > before else None

    def __call__(self, trainer) -> None:
        now = time.monotonic()
        if not self.started:  # the first step pays for warm-up: timing starts after it
            self.started, self.first_step, self.next_line = now, trainer.step, now + self.seconds
            self.recent.append((now, trainer.step))
            return
        rate = self.rate(now, trainer.step)
        if not self.measured and now - self.started >= self.measure_seconds and rate:
            self.measured = True
            measured = (trainer.step - self.first_step) / (now - self.started)
            line = (f"measured on this machine: {measured:.1f} steps/s, so {self.total:,} steps take "
                    f"{duration(self.total / measured)}; {clock((self.total - trainer.step) / measured)} left")
            self.note(line, show=True)
        if now >= self.next_line and rate:
            self.next_line = now + self.seconds
            self.note(f"step {trainer.step:,}/{self.total:,} epoch {trainer.epoch + 1} loss {trainer.loss:.4f}, "
                      f"{clock(now - self.started)} in, {clock((self.total - trainer.step) / rate)} left "
                      f"({rate:.1f} steps/s)")

    def finish(self, trainer) -> None:
        took = clock(time.monotonic() - self.started) if self.started else "0:00"
        self.note(f"trained to step {trainer.step:,} of {self.total:,}, loss {trainer.loss:.4f}, {took} this session")


def attach_progress_bar(trainer) -> None:
    """A tqdm bar for a trainer (unless it has one), closed when training ends."""
    if any(isinstance(c, ProgressBar) for c in trainer.callbacks["on_batch_end"]):
        return
    bar = ProgressBar()
    trainer.add_callback("on_batch_end", bar)
    trainer.add_callback("on_train_end", bar.close)


def interactive() -> bool:
    """True when someone watches the output live: a terminal, or a Jupyter kernel's frontend."""
    return sys.stdout.isatty() or "ipykernel" in sys.modules
