"""LMS downloads for tests: zips as Canvas and Moodle make them, and a student's zip of their a5/ folder."""
from __future__ import annotations

import io
import stat
import zipfile
from pathlib import Path

NB02, NB03 = "02_finetune_without_pretraining.ipynb", "03_span_corruption.ipynb"
PARAMS = "vanilla.model.params"


def make_zip(entries: dict[str, bytes], links: dict[str, str] | None = None) -> bytes:
    """A zip of ``entries`` (name -> bytes) and Unix symbolic links (name -> target)."""
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in entries.items():
            zf.writestr(name, data)
        for name, target in (links or {}).items():
            info = zipfile.ZipInfo(name)
            info.create_system = 3
            info.external_attr = (stat.S_IFLNK | 0o777) << 16
            zf.writestr(info, target)
    return out.getvalue()


def a5_zip(owner: str, prefix: str = "a5/") -> bytes:
    """A student's zip of their a5/ folder (docs/student_copy.md), as a file manager makes it."""
    return make_zip({f"{prefix}{NB02}": f"02 by {owner}".encode(), f"{prefix}{NB03}": f"03 by {owner}".encode(),
                     f"{prefix}outputs/{PARAMS}": b"params", f"__MACOSX/{prefix}._{NB02}": b"fork"})


def files_in(folder: Path) -> dict[str, bytes]:
    """Every regular file below ``folder``: its path there -> its bytes."""
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}
