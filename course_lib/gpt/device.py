"""Device choice, seeding, CPU thread count (from the process's share: ``course_lib.gpt.cpu_share``) and the C
allocator's policy."""
from __future__ import annotations

import ctypes
import ctypes.util
import random
import sys

import numpy as np
import torch

from course_lib.gpt.cpu_share import ThreadChoice, choose_threads


def pick_device(requested: str = "auto") -> torch.device:
    """"auto" takes CUDA when present, else the CPU; anything else is passed to torch."""
    if requested == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    device = torch.device(requested)
    if device.type == "cuda" and not torch.cuda.is_available():
        raise RuntimeError("device 'cuda' was requested but no CUDA GPU is available; use 'auto' or 'cpu'")
    return device


def seed_everything(seed: int) -> None:
    """Seed Python, NumPy and torch (all devices) so runs repeat."""
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)


def set_threads(num_threads: int | None) -> ThreadChoice:
    """Set torch's intra-op threads: ``num_threads``, else $COURSE_THREADS, else what this process's share of the
    CPUs and the other work on them leave (``choose_threads``); returns the choice."""
    choice = choose_threads(num_threads)
    torch.set_num_threads(choice.threads)
    return choice


# glibc mallopt parameters (malloc.h)
_M_TRIM_THRESHOLD = -1
_M_MMAP_MAX = -4


def keep_freed_memory() -> bool:
    """Ask glibc to keep freed memory for reuse instead of returning it to the OS; True if it agreed.

    By default glibc maps big blocks (above a threshold that grows to at most
    32 MB) straight from the kernel and unmaps them on free, so each new tensor
    of that size pays a page fault per 4 KB page on first touch, every step
    (benchmarks/FINDINGS.md has the measurements). With this, every block comes
    from the heap and the heap is not trimmed, so after a step or two training
    reuses pages already mapped. Cost: the process keeps its peak memory until it
    exits. Lasts for the whole process. No-op (False) where the C library is not glibc.
    """
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        mallopt = libc.mallopt
    except (OSError, AttributeError):
        return False
    # serve every block from the heap, and trim it back only above 2 GB of free top
    return bool(mallopt(_M_MMAP_MAX, 0)) and bool(mallopt(_M_TRIM_THRESHOLD, 2 ** 31 - 1))
