import subprocess
import sys

import pytest

from course_lib.gpt.device import set_threads


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's mallopt is Linux-only")
def test_keep_freed_memory_is_accepted_and_training_still_runs():
    """Does glibc accept the keep-freed-memory settings, and does a trainer with them still train (own process)?"""
    code = (
        "import torch\n"
        "from course_lib.gpt.device import keep_freed_memory\n"
        "from course_lib.gpt.model import GPT, GPTConfig\n"
        "from course_lib.gpt.trainer import Trainer, TrainerConfig\n"
        "print(keep_freed_memory())\n"
        "data = [(torch.arange(1, 9), torch.arange(2, 10))] * 8\n"
        "config = TrainerConfig(max_epochs=2, batch_size=4, progress=False, keep_freed_memory=True)\n"
        "history = Trainer(GPT(GPTConfig(12, 8, n_layer=1, n_head=2, n_embd=8)), data, None, config).train()\n"
        "print(len(history))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["True", "4"]


def test_bad_thread_count_is_refused():
    """Does set_threads refuse a thread count below one?"""
    with pytest.raises(ValueError, match="at least 1"):
        set_threads(0)

