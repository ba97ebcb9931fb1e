"""A wall-clock limit on a block of code in the main thread (SIGALRM), as nbgrader limits a cell."""
from __future__ import annotations

import signal
import threading
from contextlib import contextmanager
from dataclasses import dataclass


class TimeLimitExceeded(Exception):
    """The block ran past its time limit."""


@dataclass
class Alarm:
    """Whether the limit went off: a block may catch what it raised (a loop's ``except KeyboardInterrupt``)."""

    fired: bool = False


@contextmanager
def time_limit(seconds: float | None, error: type[BaseException] = TimeLimitExceeded):
    """Raise ``error`` inside the block once it has run ``seconds``; no limit for None/0 or off the main thread
    (signals reach only the main thread). Yields an Alarm that says whether it went off."""
    alarm = Alarm()
    if not seconds or threading.current_thread() is not threading.main_thread():
        yield alarm
        return

    def expire(signum, frame):
        alarm.fired = True
        raise error(f"ran past {seconds:g} s")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield alarm
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
