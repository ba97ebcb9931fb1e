"""Writing a file so that a reader never sees half of it, even when the writer dies mid-way."""
from __future__ import annotations

import os
import uuid
from pathlib import Path


def write_atomically(path: Path, text: str) -> None:
    """Write ``text`` (UTF-8) to a partial file beside ``path``, then move it over ``path``."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(f".{path.name}.{os.getpid()}.{uuid.uuid4().hex[:8]}")
    partial.write_text(text, encoding="utf-8")
    os.replace(partial, path)
