"""Device choice, seeding and CPU thread count."""
from __future__ import annotations

import os
import random

import numpy as np
import torch


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


def set_threads(num_threads: int | None) -> None:
    """Set torch's intra-op threads; None keeps torch's default (or $COURSE_THREADS)."""
    if num_threads is None and os.environ.get("COURSE_THREADS"):
        num_threads = int(os.environ["COURSE_THREADS"])
    if num_threads is not None:
        if num_threads < 1:
            raise ValueError(f"num_threads must be at least 1, got {num_threads}")
        torch.set_num_threads(num_threads)
