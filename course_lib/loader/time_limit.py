"""A wall-clock limit on a block of code in the main thread (SIGALRM), as nbgrader limits a cell."""
from __future__ import annotations

import signal
import threading
from contextlib import contextmanager


class TimeLimitExceeded(Exception):
    """The block ran past its time limit."""


@contextmanager
def time_limit(seconds: float | None, error: type[Exception] = TimeLimitExceeded):
    """Raise ``error`` inside the block once it has run ``seconds``; no limit for None/0 or off the main thread
    (signals reach only the main thread)."""
    if not seconds or threading.current_thread() is not threading.main_thread():
        yield
        return

    def expire(signum, frame):
        raise error(f"ran past {seconds:g} s")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
